# llm-sandbox session for Ruby: one process runs every call of a session in
# one top-level binding (local variables, methods, constants, required
# libraries and open files persist), started by llmsb_zygote.rb.  An
# uncaught exception ends the call (status 1, printed as Ruby prints it),
# not the session; exit ends the session.
module LlmsbSession
  Z = LlmsbZygote

  # the call's file, in the work dir (whatever the session's current one),
  # its arguments in ARGV
  def self.script
    v = Z.argv
    i = (1...v.size).find { |k| !v[k].start_with?("-") } || v.size
    ARGV.replace(v[i + 1..] || [])
    File.join(Z.arg(-1), v[i] || "")
  end

  # the call, named by its full path (as the Python session's tracebacks):
  # __dir__ and require_relative hold whatever the current directory
  def self.call(path)
    src = File.read(path)
    TOPLEVEL_BINDING.eval(src, path, 1)
    0
  rescue SystemExit
    raise
  rescue Exception => e # rubocop:disable Lint/RescueException
    $stderr.write(Z.trim(e).full_message(highlight: false, order: :top))
    1
  end

  def self.run
    loop do
      Z.tell
      path = script
      $0 = File.basename(path)
      status = call(path)
      [$stdout, $stderr, STDOUT, STDERR].uniq.each do |io|
        io.flush unless io.closed?
      rescue IOError, SystemCallError
        nil # the call's streams: what they failed to take is the call's loss
      end
      exit(status) if Z.forked?
      park
      Z.call("llmsb_z_next", status, 0)
    end
  end

  # Between calls the standard objects hold /dev/null on 0-2, where the
  # next call's streams then land: their buffers emptied (what a call left
  # unread of its stdin is not the next one's: reopening by descriptor
  # keeps a pipe's buffer), open again if a call closed them.
  def self.park
    [[STDIN, "r"], [STDOUT, "w"], [STDERR, "w"]].each do |io, mode|
      io.reopen(File::NULL, mode)
    rescue IOError, SystemCallError
      nil # output it could not flush: the last call's loss
    end
    $stdin, $stdout, $stderr = STDIN, STDOUT, STDERR
  end
end
