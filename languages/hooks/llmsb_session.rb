# llm-sandbox session for Ruby: one process runs every call of a session in
# one top-level binding (local variables, methods, constants, required
# libraries and open files persist), started by llmsb_zygote.rb.  An
# uncaught exception ends the call (status 1, printed as Ruby prints it),
# not the session; exit ends the session.
module LlmsbSession
  Z = LlmsbZygote
  RAISE = Kernel.instance_method(:raise)

  # the call's file, in the work dir (whatever the session's current one),
  # its arguments in ARGV
  def self.script
    v = Z.argv
    i = (1...v.size).find { |k| !v[k].start_with?("-") } || v.size
    ARGV.replace(v[i + 1..] || [])
    File.join(Z.arg(-1), v[i] || "")
  end

  # the call, named by its full path in __FILE__ and $0 alike (as the
  # Python session's tracebacks; `if __FILE__ == $0` holds): __dir__ and
  # require_relative hold whatever the current directory
  def self.call(path)
    src = File.read(path)
    TOPLEVEL_BINDING.eval("$_ = $~ = nil") # the last line read and match: none yet
    TOPLEVEL_BINDING.eval(src, path, 1)
    0
  rescue SystemExit => e # the end of the session: Kernel#raise as at load, not the call's
    RAISE.bind_call(self, e)
  rescue Exception => e # rubocop:disable Lint/RescueException
    report(e)
    1
  end

  # the exception as Ruby prints an uncaught one; an exception whose
  # message fails, or a $stderr the call broke, loses the text, not the
  # session
  def self.report(err)
    $stderr.write(Z.trim(err).full_message(highlight: false, order: :top))
  rescue Exception # rubocop:disable Lint/RescueException
    nil
  end

  def self.run
    loop do
      Z.tell
      path = script
      $0 = path
      status = call(path)
      flush
      exit(status) if Z.forked?
      park
      Z.call("llmsb_z_next", status, 0)
    end
  end

  # the call's streams, whatever objects it put in $stdout and $stderr:
  # what they failed to take is the call's loss
  def self.flush
    [$stdout, $stderr, STDOUT, STDERR].uniq.each do |io|
      io.flush if io.respond_to?(:flush) && !(io.respond_to?(:closed?) && io.closed?)
    rescue StandardError
      nil
    end
  end

  CLOSE = Fiddle::Function.new(Fiddle::Handle::DEFAULT["close"], [Fiddle::TYPE_INT],
                               Fiddle::TYPE_INT)

  # Between calls the standard objects hold /dev/null on 0-2, where the
  # next call's streams then land: their buffers emptied (what a call left
  # unread of its stdin is not the next one's: reopening by descriptor
  # keeps a pipe's buffer), their modes kept (STDERR's sync), line counts
  # ($.) at 0, and open again if a call closed them (Ruby keeps 0-2 open
  # under a closed one: that descriptor is closed first, so the reopen
  # lands on it).
  def self.park
    [[STDIN, "r"], [STDOUT, "w"], [STDERR, "w"]].each_with_index do |(io, mode), fd|
      if io.closed?
        CLOSE.call(fd)
        io.reopen(File::NULL, mode)
      else
        io.reopen(File::NULL)
      end
    rescue IOError, SystemCallError
      nil # output it could not flush: the last call's loss
    end
    $stdin, $stdout, $stderr = STDIN, STDOUT, STDERR
    STDERR.sync = true
    STDIN.lineno = ARGF.lineno = 0
  rescue IOError
    nil # a stream that could not be reopened: closed in the next call too
  end
end
