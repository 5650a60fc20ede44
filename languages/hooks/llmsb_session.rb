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

  def self.call(path)
    src = File.read(path)
    TOPLEVEL_BINDING.eval(src, File.basename(path), 1)
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
      $stdout.flush
      $stderr.flush
      exit(status) if Z.forked?
      Z.call("llmsb_z_next", status, 0)
      # the new stdin's own buffer: nothing of the last call's input is left
      $stdin = STDIN.reopen(IO.for_fd(0, autoclose: false))
    end
  end
end
