#!/bin/sh
# test_cases_state.sh - each test case of a job starts from the state right
# after the compile step, as a separate run of the same binary would: what
# case 1 leaves in the work dir, /tmp and /dev/shm (new files, a dir, a job
# file changed and made unreadable, a class file the compiler made and the
# case deleted) is gone or back in case 2, and the compiled program is
# still there.  C++ and Java (compiled), Python through the zygote.  A
# file changed through a shared mmap (no time moves on tmpfs) is put back;
# a tree 700 dirs deep is removed; an installed library (not copied) is
# read-only to the cases, and a case that changes one all the same ends
# the cases with an error, not a wrong verdict for the next; job files
# nested deeper than the copy goes make the job invalid, not retried; an
# installed library has no such cap (one kept root: 70 dirs deep is ok).
# Against the real dockerd and the llmsb images.
B=${LLMSB_BIN:-bin/llm-sandbox}
. "$(dirname "$0")/../lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
suite cases_state
WHY_FILE=$T/py WHY_SHOW="head -8"

cat >"$T/cases.yaml" <<'EOF'
jobs:
  - id: cpp
    lang: cpp
    files: {data.txt: "orig"}
    code: |
      #include <fstream>
      #include <iostream>
      #include <iterator>
      #include <string>
      #include <sys/stat.h>
      static int there(const char *p) { struct stat st; return stat(p, &st) == 0; }
      int main(int argc, char **argv) {
          std::string m;
          std::cin >> m;
          if (m == "write") {
              std::ofstream("/tmp/x") << 1;
              std::ofstream("y") << 1;
              std::ofstream("/dev/shm/z") << 1;
              std::ofstream("data.txt", std::ios::app) << "+changed";
              chmod("data.txt", 0);
              mkdir("d", 0700);
              std::ofstream("d/e") << 1;
              std::cout << "wrote\n";
              return 0;
          }
          std::ifstream f("data.txt");
          std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
          std::cout << there("/tmp/x") << there("y") << there("/dev/shm/z") << there("d")
                    << there(argv[0]) << " " << s << "\n";
      }
    cases:
      - {stdin: "write", expect_stdout: "wrote\n"}
      - {stdin: "check", expect_stdout: "00001 orig\n"}
      - {stdin: "write", expect_stdout: "wrote\n"}
      - {stdin: "check", expect_stdout: "00001 orig\n"}
  - id: java
    lang: java
    code: |
      import java.io.*;
      class Helper { static String hi() { return "helper"; } }
      public class Main {
          public static void main(String[] a) throws IOException {
              String m = new BufferedReader(new InputStreamReader(System.in)).readLine();
              if (m.equals("write")) {
                  new FileWriter("/tmp/x").close();
                  new FileWriter("y").close();
                  new FileWriter("/dev/shm/z").close();
                  System.out.println("deleted " + new File("Helper.class").delete());
                  return;
              }
              System.out.println(Helper.hi() + " " + new File("/tmp/x").exists() + " "
                  + new File("y").exists() + " " + new File("/dev/shm/z").exists());
          }
      }
    cases:
      - {stdin: "write", expect_stdout: "deleted true\n"}
      - {stdin: "check", expect_stdout: "helper false false false\n"}
  - id: python
    lang: python
    files: {data.txt: "orig"}
    code: |
      import os, sys
      if sys.stdin.read().strip() == "write":
          for p in ("/tmp/x", "y", "/dev/shm/z"):
              open(p, "w").close()
          open("data.txt", "a").write("+changed")
          print("wrote")
      else:
          print([os.path.exists(p) for p in ("/tmp/x", "y", "/dev/shm/z")], open("data.txt").read())
    cases:
      - {stdin: "write", expect_stdout: "wrote\n"}
      - {stdin: "check", expect_stdout: "[False, False, False] orig\n"}
  - id: mmap
    lang: cpp
    files: {data.txt: "AAAA"}
    code: |
      #include <sys/mman.h>
      #include <fcntl.h>
      #include <unistd.h>
      #include <cstdio>
      int main() {
          int n = 0, fd = open("data.txt", O_RDWR);
          if (scanf("%d", &n) != 1 || fd < 0) return 9;
          char *p = (char *)mmap(0, 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (p == MAP_FAILED) return 8;
          printf("%.4s\n", p);
          if (n == 1) { p[0] = 'B'; msync(p, 4, MS_SYNC); }
          return 0;
      }
    cases:
      - {stdin: "1", expect_stdout: "AAAA\n"}
      - {stdin: "2", expect_stdout: "AAAA\n"}
  - id: deep
    lang: cpp
    code: |
      #include <sys/stat.h>
      #include <unistd.h>
      #include <cstdio>
      int main() {
          int n = 0;
          if (scanf("%d", &n) != 1) return 9;
          printf("%d\n", access("/tmp/d", F_OK) == 0);
          if (n == 1 && chdir("/tmp") == 0)
              for (int i = 0; i < 700; i++)
                  if (mkdir("d", 0700) != 0 || chdir("d") != 0) return 1;
          return 0;
      }
    cases:
      - {stdin: "1", expect_stdout: "0\n"}
      - {stdin: "2", expect_stdout: "0\n"}
  - id: kept
    lang: cpp
    files: {".llmsb-lib/lib.txt": "AAAA"}
    code: |
      #include <sys/mman.h>
      #include <sys/stat.h>
      #include <fcntl.h>
      #include <unistd.h>
      #include <cstdio>
      #include <string>
      #include <iostream>
      int main() {
          std::string m;
          std::cin >> m;
          const char *lib = ".llmsb-lib/lib.txt";
          if (m == "try") { puts(open(lib, O_RDWR) < 0 ? "read-only" : "writable"); return 0; }
          if (m == "force") {
              chmod(lib, 0644);
              int fd = open(lib, O_RDWR);
              char *p = (char *)mmap(0, 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
              if (p == MAP_FAILED) return 8;
              p[0] = 'B';
              chmod(lib, 0444);
              puts("forced");
              return 0;
          }
          char b[5] = {0};
          if (read(open(lib, O_RDONLY), b, 4) != 4) return 7;
          puts(b);
      }
    cases:
      - {stdin: "try", expect_stdout: "read-only\n"}
      - {stdin: "force", expect_stdout: "forced\n"}
      - {stdin: "check", expect_stdout: "AAAA\n"}
  - id: deepfile
    lang: cpp
    files: {"a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/x.txt": "1"}
    code: "int main() {}\n"
    cases: [{}, {}]
  - id: deeplib
    lang: python
    files: {".llmsb-lib/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/x.txt": "lib"}
    code: |
      import glob
      print(open(glob.glob(".llmsb-lib/**/x.txt", recursive=True)[0]).read())
    cases:
      - {expect_stdout: "lib\n"}
      - {expect_stdout: "lib\n"}
EOF
$B submit "$T/cases.yaml" --local --out "$T/cases.jsonl" </dev/null >"$T/out" 2>&1
for id in cpp java python mmap deep kept deepfile deeplib; do
    if python3 - "$T/cases.jsonl" "$id" >"$T/py" 2>&1 <<'PY'
import json, sys
r = {x["id"]: x for x in map(json.loads, open(sys.argv[1]))}[sys.argv[2]]
cases = [(c["status"], c["stdout"], c["stderr"][:200]) for c in r.get("cases") or []]
shown = ({k: r.get(k) for k in ("status", "error")}, cases)
if sys.argv[2] == "deepfile":
    # a state the copy cannot hold is the job's to fix, not a retried failure
    assert r["status"] == "invalid" and "nest dirs deeper than 64" in r["error"], shown
elif sys.argv[2] != "kept":
    assert r["status"] == "ok" and r["passed"], shown
else:
    # case 2 changed a library the copy does not hold: case 3 is not run
    assert r["status"] == "runtime_error" and not r["passed"], shown
    assert [c[1] for c in cases] == ["read-only\n", "forced\n"], shown
    for part in ("case 2 left", "so case 3 was not run", ".llmsb-lib/lib.txt changed"):
        assert part in r["error"], shown
PY
    then ok "each_case_starts_after_compile_$id"
    else bad "each_case_starts_after_compile_$id" "$(tail -1 "$T/py" | head -c 200)"
    fi
done
suite_end
