// LlmsbJavac.java - llm-sandbox's warm javac (agent/javac.c starts it).
//
// A long-lived JVM that compiles with javac in-process, so a Java job's
// compile step skips javac's start-up.  Compiled at image build by root into
// /usr/local/lib/llmsb (read-only to jobs).  The agent starts it as a uid
// other than the job's, with a listening unix socket on fd 0 (bound in a
// directory only root can search: no job can connect) and a pipe on fd 1 on
// which it says "R" once warm.  The agent connects once per compile and
// hands the connected end to the job's compile step (agent/javac.c), which
// sends javac's arguments and gets back javac's exit code, its output and
// the class files, in memory: this process writes no file.
//
// Nothing is kept from one compile to the next but loaded and JIT-compiled
// code: each compile gets a new file manager and a new javac context.
// Annotation processing is off (-proc:none): the agent sends only jobs
// whose work dir holds no library and no META-INF, and the server refuses
// to start (the jobs then compile plainly) when a jar or directory of its
// class path names a processor (an image with liblombok-java, say).
//
// At image build, `--prime OPTIONS` warms up and exits: the class-data
// sharing archive the server maps (hooks/javac-prime).
//
// Wire format (big-endian, as DataInput/DataOutput):
//   request:  u32 n, then n args (u32 len, UTF-8 bytes); the last arg is
//             the source file, the others javac's options
//   answer:   u32 exit code, u32 len + output (UTF-8), u32 nfiles, then per
//             file: u32 len + path relative to -d (UTF-8), u32 len + bytes;
//             exit code 2: the compile threw (the plain javac decides), 3:
//             this JVM failed (an Error): it answers nothing more and the
//             agent ends it
import java.io.*;
import java.net.URI;
import java.nio.channels.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.jar.JarFile;
import javax.tools.*;

public final class LlmsbJavac {
    private static final int MAX_ARGS = 64, MAX_ARG = 1 << 16;

    // A class file javac writes, kept in memory under its path below -d.
    private static final class Out extends SimpleJavaFileObject {
        final String path;
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Out(String path, Kind kind) {
            super(URI.create("mem:///" + path), kind);
            this.path = path;
        }

        @Override
        public OutputStream openOutputStream() {
            bytes.reset();
            return bytes;
        }
    }

    private static final class Capture extends ForwardingJavaFileManager<StandardJavaFileManager> {
        final Map<String, Out> files = new LinkedHashMap<>();

        Capture(StandardJavaFileManager fm) {
            super(fm);
        }

        Iterable<? extends JavaFileObject> sources(String file) {
            return fileManager.getJavaFileObjects(file);
        }

        @Override
        public JavaFileObject getJavaFileForOutput(Location loc, String name, JavaFileObject.Kind kind,
                                                   FileObject sibling) throws IOException {
            if (loc != StandardLocation.CLASS_OUTPUT || kind != JavaFileObject.Kind.CLASS)
                throw new IOException("llmsb-javac: unexpected output " + loc + " " + name);
            Out o = new Out(name.replace('.', '/') + kind.extension, kind);
            files.put(o.path, o);
            return o;
        }

        @Override
        public FileObject getFileForOutput(Location loc, String pkg, String name, FileObject sibling)
            throws IOException {
            throw new IOException("llmsb-javac: unexpected output " + loc + " " + name);
        }
    }

    private static final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();

    // A class path as javac's launcher passes it on: an element whose last
    // part is "*" stands for the .jar files of its directory, in directory
    // order (the launcher's), or for nothing.
    static String expandClassPath(String cp) {
        StringJoiner out = new StringJoiner(File.pathSeparator);
        for (String e : cp.split(File.pathSeparator, -1)) {
            if (!e.equals("*") && !e.endsWith(File.separator + "*")) {
                out.add(e);
                continue;
            }
            File dir = new File(e.substring(0, e.length() - 1).isEmpty() ? "." : e.substring(0, e.length() - 1));
            String[] names = dir.list();
            for (String n : names == null ? new String[0] : names)
                if (n.toLowerCase(Locale.ROOT).endsWith(".jar"))
                    out.add(new File(dir, n).getPath());
        }
        return out.toString();
    }

    static List<String> options(List<String> args) {
        List<String> opts = new ArrayList<>(args.subList(0, args.size() - 1));
        for (int i = 0; i + 1 < opts.size(); i++)
            if (opts.get(i).equals("-cp") || opts.get(i).equals("-classpath"))
                opts.set(i + 1, expandClassPath(opts.get(i + 1)));
        opts.add("-proc:none");
        return opts;
    }

    private static final String PROCESSOR = "META-INF/services/javax.annotation.processing.Processor";

    // The element of the class path (options(), expanded) that names an
    // annotation processor javac would run, or null.
    static String processorOn(List<String> opts) throws IOException {
        String cp = ".";
        for (int i = 0; i + 1 < opts.size(); i++)
            if (opts.get(i).equals("-cp") || opts.get(i).equals("-classpath"))
                cp = opts.get(i + 1);
        for (String e : cp.split(File.pathSeparator, -1)) {
            File f = new File(e.isEmpty() ? "." : e);
            if (f.isDirectory() ? new File(f, PROCESSOR).exists() : f.isFile() && jarNames(f))
                return e;
        }
        return null;
    }

    static boolean jarNames(File f) {
        try (JarFile j = new JarFile(f)) {
            return j.getEntry(PROCESSOR) != null;
        } catch (IOException e) {
            return false; // not a jar: javac finds no processor there either
        }
    }

    private static List<String> warmed; // the options warmed with (the jobs')
    private static boolean broken;      // an Error: nothing more is answered

    // One compile; the answer as the wire format says.
    static void compile(List<String> args, DataOutputStream out) throws IOException {
        StringWriter text = new StringWriter();
        int code;
        Capture fm = null;
        try {
            List<String> opts = options(args);
            if (warmed != null && !opts.equals(warmed))
                throw new IllegalArgumentException("options not the server's: " + opts);
            fm = new Capture(javac.getStandardFileManager(null, null, null));
            String file = args.get(args.size() - 1);
            Iterable<? extends JavaFileObject> units = fm.sources(file);
            code = javac.getTask(text, fm, null, opts, null, units).call() ? 0 : 1;
        } catch (Error e) {
            code = 3; // out of memory, say: this JVM is done
            broken = true;
            text = new StringWriter();
        } catch (Throwable e) {
            code = 2; // the job's plain javac decides
            text.write("llmsb-javac: " + e);
        } finally {
            try {
                if (fm != null)
                    fm.close();
            } catch (Throwable e) {
                // nothing written: the class files are in memory
            }
        }
        if (code == 3) // the heap may be gone: what's held goes first
            fm = null;
        out.writeInt(code);
        writeBytes(out, text.toString().getBytes(StandardCharsets.UTF_8));
        out.writeInt(code == 0 ? fm.files.size() : 0);
        if (code == 0)
            for (Out o : fm.files.values()) {
                writeBytes(out, o.path.getBytes(StandardCharsets.UTF_8));
                writeBytes(out, o.bytes.toByteArray());
            }
        out.flush();
    }

    static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    static List<String> readRequest(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 1 || n > MAX_ARGS)
            throw new IOException("llmsb-javac: bad argument count " + n);
        List<String> args = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int len = in.readInt();
            if (len < 0 || len > MAX_ARG)
                throw new IOException("llmsb-javac: bad argument length " + len);
            byte[] b = new byte[len];
            in.readFully(b);
            args.add(new String(b, StandardCharsets.UTF_8));
        }
        return args;
    }

    // Warms javac on a program like the jobs' (in memory, nothing written).
    static void warm(String[] opts) throws IOException {
        String src = "import java.util.*;\nimport java.util.stream.*;\n"
                   + "class Solution {\n  public List<Integer> f(List<Integer> xs) {\n"
                   + "    Map<String, Integer> m = new HashMap<>();\n"
                   + "    return xs.stream().map(x -> x * 2).sorted().collect(Collectors.toList());\n"
                   + "  }\n}\npublic class Main {\n  public static void main(String[] a) {\n"
                   + "    System.out.println(String.format(\"%d\", new Solution().f(Arrays.asList(2, 1)).size()));\n"
                   + "  }\n}\n";
        JavaFileObject unit = new SimpleJavaFileObject(URI.create("mem:///Main.java"),
                                                       JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignore) {
                return src;
            }
        };
        List<String> o = new ArrayList<>(Arrays.asList(opts));
        o.add("Main.java");
        o = options(o);
        for (int i = 0; i < 10; i++) { // ~0.3 s: the first jobs' compiles take half as long
            Capture fm = new Capture(javac.getStandardFileManager(null, null, null));
            javac.getTask(new StringWriter(), fm, null, o, null, List.of(unit)).call();
            fm.close();
        }
    }

    public static void main(String[] argv) throws IOException {
        if (argv.length > 0 && argv[0].equals("--prime")) { // image build: for the CDS archive
            List<String> o = new ArrayList<>(Arrays.asList(argv).subList(1, argv.length));
            o.add("Main.java");
            processorOn(options(o));
            warm(Arrays.copyOfRange(argv, 1, argv.length));
            return;
        }
        Channel inherited = System.inheritedChannel();
        if (!(inherited instanceof ServerSocketChannel)) {
            System.err.println("llmsb-javac: fd 0 is not a listening socket");
            System.exit(2);
        }
        ServerSocketChannel ss = (ServerSocketChannel)inherited;
        List<String> o = new ArrayList<>(Arrays.asList(argv));
        o.add("Main.java");
        warmed = options(o);
        String proc = processorOn(warmed);
        if (proc != null) { // -proc:none would compile otherwise than javac
            System.err.println("llmsb-javac: an annotation processor on the class path: " + proc);
            System.exit(3);
        }
        warm(argv); // argv: the options a job's compile uses
        System.out.write('R');
        System.out.flush();
        while (!broken) {
            try (SocketChannel ch = ss.accept()) {
                DataInputStream in = new DataInputStream(Channels.newInputStream(ch));
                DataOutputStream out =
                    new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(ch), 65536));
                compile(readRequest(in), out);
            } catch (Throwable e) {
                // that compile's channel failed (its step was killed): the next is new
                System.err.println("llmsb-javac: " + e);
            }
        }
        for (;;) // the agent ends this JVM (an exit would count as a failure)
            try {
                Thread.sleep(60000);
            } catch (InterruptedException e) {
                // keep waiting
            }
    }
}
