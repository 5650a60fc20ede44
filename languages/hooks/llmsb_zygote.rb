# llm-sandbox zygote for Ruby (docs/benchmarks.md, "The zygote"): started
# by llmsb-agent as root on a clean sandbox as `ruby THIS PROFILE UID GID`,
# fd 3 its socket to the agent.  It forks one process per job, which becomes the job's user
# (llmsb_zygote.so, agent/zygote_lib.c: the same hardening and protocol as
# the Python zygote's) and runs the job's file as `ruby FILE ARGS` would:
# at the top level, $0, ARGV, __FILE__, a new random seed, uncaught
# exceptions printed and exit codes by Ruby itself, its backtraces without
# a frame of this file.  What it cannot mimic (interpreter options, a file
# with __END__, options on its #! line, a syntax error, the job's own gems)
# runs in a plain `ruby`.
module LlmsbZygote
  BEFORE = $LOADED_FEATURES.dup # a plain ruby's, before the zygote's Fiddle
end
require "fiddle"

module LlmsbZygote
  LIB = Fiddle.dlopen("/usr/local/lib/llmsb/llmsb_zygote.so")
  SELF = File.expand_path(__FILE__)
  ARG_MAX = 4096

  def self.int(v = 0)
    p = Fiddle::Pointer.malloc(Fiddle::SIZEOF_INT, Fiddle::RUBY_FREE)
    p[0, Fiddle::SIZEOF_INT] = [v].pack("i")
    p
  end

  def self.val(p) = p[0, Fiddle::SIZEOF_INT].unpack1("i")

  # f(ints...) with each int passed by pointer (agent/zygote_lib.c), the
  # last one's value returned (the rc)
  def self.call(name, *ints)
    ptrs = ints.map { |v| int(v) }
    Fiddle::Function.new(LIB[name], [Fiddle::TYPE_VOIDP] * ptrs.size, Fiddle::TYPE_VOID).call(*ptrs)
    ptrs.empty? ? nil : val(ptrs.last)
  end

  def self.must(name, *ints)
    exit!(1) unless call(name, *ints).zero?
  end

  # argv[i] (-1: the work dir) as ruby's own ARGV holds it (the locale's
  # encoding), nil past the last
  def self.arg(i, size = ARG_MAX)
    buf = Fiddle::Pointer.malloc(size, Fiddle::RUBY_FREE)
    out = Fiddle::Pointer.malloc(Fiddle::SIZEOF_VOIDP, Fiddle::RUBY_FREE)
    out[0, Fiddle::SIZEOF_VOIDP] = [buf.to_i].pack("J")
    len = int(size)
    Fiddle::Function.new(LIB["llmsb_z_arg"], [Fiddle::TYPE_VOIDP] * 3, Fiddle::TYPE_VOID)
                    .call(int(i), out, len)
    n = val(len)
    return nil if n.negative?
    return arg(i, n) if n >= size # did not fit: n is the size it needs
    buf.to_s.force_encoding(Encoding.default_external)
  end

  def self.argv
    v = []
    while (a = arg(v.size))
      v << a
    end
    v
  end

  # Nothing is preloaded but the interpreter and what it loads at its start
  # (RubyGems, did_you_mean, error_highlight): a library required here
  # would define its constants for every job, so a program that forgot its
  # `require "json"` would run here and fail in a plain ruby.
  def self.init(profile, uid, gid)
    must("llmsb_z_init", 3, uid, gid, profile == "session" ? 1 : 0, 0)
    GC.start
    must("llmsb_z_ready", 0)
  end

  # The zygote forks each job's process ahead of its request and waits for
  # it; returns in that process only, the job's user by then.
  def self.serve
    loop do
      call("llmsb_z_waiting")
      pid = Process.fork
      break unless pid
      call("llmsb_z_wait", pid, 0)
    end
    must("llmsb_z_take", 0)
    must("llmsb_z_become", 0)
  end

  def self.tell = call("llmsb_z_tell", 0)

  # Collects what the compiler warns ($stderr's writes) until it is known
  # to compile: a file that does not gets a plain start, which warns again.
  HELD = Class.new do
    attr_reader :text

    def initialize = @text = +""

    def write(*s)
      s.each { |x| @text << x.to_s }
      s.sum { |x| x.to_s.bytesize }
    end
  end

  # [path, args, compiled] of `ruby FILE ARGS`, or nil for a plain start
  def self.job(argv)
    return nil unless argv[0] == "ruby" && argv.size >= 2 && !argv[1].start_with?("-")
    path = argv[1]
    gems = ENV["GEM_HOME"]
    return nil if !File.file?(path) || (gems && File.exist?(gems))
    src = File.binread(path)
    # DATA, and the options a #! line gives ruby
    return nil if src.match?(/^__END__\r?$/) || src.match?(/\A#!.*ruby.*\s-/)
    held = HELD.new
    err = $stderr
    begin
      $stderr = held
      iseq = RubyVM::InstructionSequence.compile_file(path)
    ensure
      $stderr = err
    end
    $stderr.write(held.text) unless held.text.empty?
    [path, argv[2..], iseq]
  rescue SyntaxError, ScriptError, SystemCallError
    nil
  end

  # What trim calls, as it is now: it runs after the job's code, which may
  # have redefined any of these (or Kernel#raise, which the zygote never
  # calls after the job: Ruby itself prints and exits).
  BACKTRACE = Exception.instance_method(:backtrace)
  SET_BACKTRACE = Exception.instance_method(:set_backtrace)
  CAUSE = Exception.instance_method(:cause)
  REJECT = Array.instance_method(:reject)
  STARTS = String.instance_method(:start_with?)
  DIR = "#{File.dirname(SELF)}/".freeze

  # an exception's backtraces (its causes' too) without the zygote's
  # frames; one without any (the program's set_backtrace dropped it) is
  # where Ruby places it, at the top frame: the job's file, not ours
  def self.trim(e, path = nil)
    SET_BACKTRACE.bind_call(e, [path]) if path && !BACKTRACE.bind_call(e)
    x = e
    while x
      bt = BACKTRACE.bind_call(x)
      SET_BACKTRACE.bind_call(x, REJECT.bind_call(bt) { |l| STARTS.bind_call(l, DIR) }) if bt
      x = CAUSE.bind_call(x)
    end
    e
  end

  # What the zygote itself defined leaves the job's view: a plain ruby has
  # no Fiddle and no LlmsbZygote until it requires one.
  def self.hide
    Object.send(:remove_const, :LlmsbZygote)
    Object.send(:remove_const, :Fiddle)
    $LOADED_FEATURES.replace($LOADED_FEATURES & BEFORE)
  end

  # The job's process: the job, as `ruby FILE ARGS` runs it (in a method:
  # the top-level binding keeps no name of the zygote's).
  def self.run_job
    job = self.job(argv)
    call("llmsb_z_plain") unless job
    tell
    path, args, iseq = job
    $0 = path
    ARGV.replace(args)
    hide
    begin
      iseq.eval
    ensure
      trim($!, path) if $! # the exception on its way out, which Ruby prints
    end
  end

  def self.forked? = call("llmsb_z_forked", 0) != 0
end

LlmsbZygote.init(ARGV[0], Integer(ARGV[1]), Integer(ARGV[2]))
LlmsbZygote.serve
srand # no two jobs share a generator's state
if ARGV[0] == "session"
  require "/usr/local/lib/llmsb/llmsb_session.rb"
  LlmsbSession.run # never returns
end
LlmsbZygote.run_job
