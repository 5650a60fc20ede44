#!/usr/bin/python3
"""compile_once.py - the HTTP front's compile once against the plain path:
every call of a corpus of compiled programs (C++, Java, Go, Rust), each
program called with several stdins that pass, fail, crash, time out, run
out of memory, flood their output, write files a later call must not see,
and a program that does not compile, sent at once to two servers: FAST
(compile once on, one slot, so calls wait together and run as one job's
cases) and PLAIN (--compile-once off); every result must be the same on
every field but the timings, the ids and where it ran.
    python3 compile_once.py FAST_URL PLAIN_URL
Prints "ok NAME" / "FAIL NAME: why" lines and exits 1 on a failure.  The
standard library only."""
import json
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

fast, plain = sys.argv[1], sys.argv[2]

CPP = r"""
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>
int main() {
    long a = 0, b = 0;
    if (!(std::cin >> a >> b)) { std::cerr << "no input\n"; return 3; }
    if (FILE *f = std::fopen("state.txt", "r")) { std::puts("stale"); std::fclose(f); }
    else { f = std::fopen("state.txt", "w"); std::fputs("x", f); std::fclose(f); std::puts("fresh"); }
    switch (a) {
    case 1: std::abort();
    case 2: { volatile int z = 0; std::printf("%d\n", 1 / z); break; }
    case 3: for (;;) {}
    case 4: { std::vector<char *> v; for (;;) { char *p = (char *)std::malloc(1 << 20);
              for (int i = 0; i < (1 << 20); i += 4096) p[i] = 1; v.push_back(p); } }
    case 5: for (long i = 0; i < 2000000; i++) std::putchar('y');
            break;
    case 6: std::cout << std::string(20000, 'z') << "\n"; break;
    case 7: std::cerr << "warning: " << b << "\n"; break;
    case 8: { int *p = nullptr; *p = 1; break; }
    }
    std::cout << a + b << "\n";
    return a == 9 ? 4 : 0;
}
"""
JAVA = r"""
import java.util.Scanner;
public class Main {
    public static void main(String[] args) {
        Scanner s = new Scanner(System.in);
        long a = s.nextLong(), b = s.nextLong();
        if (a == 1) throw new IllegalStateException("one");
        if (a == 2) System.exit(7);
        System.out.println(a + b);
    }
}
"""
GO = r"""
package main
import "fmt"
func main() {
	var a, b int
	if _, err := fmt.Scan(&a, &b); err != nil { fmt.Println("bad input"); return }
	if a == 1 { panic("one") }
	fmt.Println(a + b)
}
"""
RUST = r"""
use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    if v[0] == 1 { panic!("one"); }
    if v[0] == 2 { std::process::exit(5); }
    println!("{}", v[0] + v[1]);
}
"""
BROKEN = "int main() { return undefined_name; }\n"

calls = []
for stdin in ["10 20\n", "1 1\n", "2 2\n", "3 3\n", "4 4\n", "5 5\n", "6 6\n", "7 7\n",
              "8 8\n", "9 9\n", "", "x y\n", "0 0", "-5 3\n\n\n", "12 34\n"]:
    calls.append(("cpp", CPP, stdin))
for stdin in ["3 4\n", "1 0\n", "2 0\n", "40 2\n", "5 5\n"]:
    calls.append(("java", JAVA, stdin))
for stdin in ["3 4\n", "1 0\n", "x\n", "40 2\n", "5 5\n"]:
    calls.append(("go", GO, stdin))
for stdin in ["3 4\n", "1 0\n", "2 0\n", "40 2\n"]:
    calls.append(("rust", RUST, stdin))
for stdin in ["1\n", "2\n", "3\n"]:
    calls.append(("cpp", BROKEN, stdin))

COMPARED = ["status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated",
            "stderr_truncated", "compile_output", "error", "violations", "artifacts"]


def run(url, lang, code, stdin):
    body = {"lang": lang, "code": code, "stdin": stdin, "timeout": 2, "memory": 192,
            "output": 1048576}
    req = urllib.request.Request(url + "/llm-sandbox/run", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return json.load(r)
    except Exception as e:  # an answer that is not a result fails its row
        return {"status": "no answer: %s" % e}


def all_of(url):
    with ThreadPoolExecutor(len(calls)) as ex:
        return list(ex.map(lambda c: run(url, *c), calls))


fails = 0
got_fast, got_plain = all_of(fast), all_of(plain)
for (lang, code, stdin), a, b in zip(calls, got_fast, got_plain):
    name = "%s %s stdin=%r" % (lang, "broken" if code == BROKEN else "program", stdin)
    diff = [k for k in COMPARED if a.get(k) != b.get(k)]
    if "status" not in a or a["status"].startswith("no answer") or diff:
        fails += 1
        print("FAIL %s: %s" % (name, "; ".join(
            "%s: %r vs plain %r" % (k, str(a.get(k))[:120], str(b.get(k))[:120])
            for k in (diff or ["status"]))))
    else:
        print("ok %s -> %s exit %s" % (name, a["status"], a.get("exit_code")))
sys.exit(1 if fails else 0)
