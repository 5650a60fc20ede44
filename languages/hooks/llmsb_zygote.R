## llm-sandbox zygote for R (docs/benchmarks.md): Rscript --no-save --no-restore
## THIS PROFILE UID GID, started by llmsb-agent as root on a clean sandbox, fd 3
## its socket.  The work is in llmsb_zygote.so (agent/zygote_lib.c).  Kept under
## 4 KiB: R's REPL reads this file whole into its stream's buffer, and a job's
## process, when the last line returns, reads the job's file through the same
## descriptor (llmsb_z_r_job), as `Rscript FILE` would.
local({
Z <- function(f, ...) .C(f, ..., PACKAGE = "llmsb_zygote")
ok <- function(r) if (r$rc != 0L) Z("llmsb_z_exit", 1L)
a <- commandArgs(TRUE)
session <- a[1] == "session"
dyn.load("/usr/local/lib/llmsb/llmsb_zygote.so")
unlink(tempdir(), recursive = TRUE) # root's: the cleanup (as the sandbox user) could not
ok(Z("llmsb_z_init", 3L, as.integer(a[2]), as.integer(a[3]), as.integer(session), rc = 0L))
## nothing preloaded but R's own start (base, stats, graphics, grDevices,
## utils, datasets, methods): ggplot2's rlang starts a thread when loaded
if (exists(".Random.seed", globalenv())) rm(".Random.seed", envir = globalenv())
invisible(gc())
ok(Z("llmsb_z_ready", rc = 0L))
repeat {
    pid <- Z("llmsb_z_fork", pid = 0L)$pid
    if (pid == 0L) break
    if (pid < 0L) Z("llmsb_z_exit", 1L)
    Z("llmsb_z_wait", pid, rc = 0L)
}
ok(Z("llmsb_z_take", rc = 0L))
ok(Z("llmsb_z_become", rc = 0L))
arg <- function(i, size = 4096L) {
    r <- Z("llmsb_z_arg", as.integer(i), s = strrep(" ", size), len = size)
    if (r$len < 0L) NULL else if (r$len >= size) arg(i, r$len) else r$s
}
args <- function() {
    v <- character()
    while (!is.null(x <- arg(length(v)))) v <- c(v, x)
    v
}
argv <- args()
script <- argv[-1][!startsWith(argv[-1], "-")][1]
plots <- function() sys.source("/usr/local/lib/llmsb/plots.R", baseenv())
if (session) {
    Z("llmsb_z_r_job", 1L, rc = 0L)
    plots()
    e <- new.env(parent = baseenv())
    sys.source("/usr/local/lib/llmsb/llmsb_session.R", e)
    e$run(Z, function() { # the call's file, in the work dir
        v <- args()
        file.path(arg(-1L), v[-1][!startsWith(v[-1], "-")][1])
    }) # never returns
}
lib <- Sys.getenv("R_LIBS_USER")
if (argv[1] != "Rscript" || is.na(script) || !file.exists(script) ||
    (nzchar(lib) && dir.exists(lib)) || any(file.exists(c(".Rprofile", ".Renviron",
    file.path(Sys.getenv("HOME"), c(".Rprofile", ".Renviron"))))) ||
    Z("llmsb_z_r_job", 0L, rc = 0L)$rc != 0L)
    Z("llmsb_z_plain")
Z("llmsb_z_tell", 0L)
plots()
dyn.unload("/usr/local/lib/llmsb/llmsb_zygote.so")
invisible()
})
