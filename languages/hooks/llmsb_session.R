## llm-sandbox session for R: one process runs every call of a session in
## one global environment (variables, attached packages and open
## connections persist), started by llmsb_zygote.R.  Each call's file is
## parsed and its expressions evaluated at the top level in turn, visible
## values printed, as R's REPL does; an error ends the call (status 1) as
## "Error in CALL : MESSAGE" on stderr, not the session; warnings are
## told after the expression that raised them; quit() ends the session.
## Each call's graphics devices are closed at its end (its figures saved).
## Its functions live in an environment whose parent is base's: a session's
## own definitions (a `cat` of its own) cannot change how calls are run.
run <- function(Z, script) {
    repeat {
        Z("llmsb_z_tell", 0L)
        plots_start()
        status <- call(script())
        grDevices::graphics.off()
        flush(stdout())
        flush(stderr())
        if (Z("llmsb_z_forked", rc = 0L)$rc != 0L) quit(save = "no", status = status)
        Z("llmsb_z_next", status, rc = 0L)
    }
}

## the last call's figures were collected: numbering starts again at plot-001
plots_start <- function() {
    dir <- Sys.getenv("SANDBOX_PLOTS_DIR")
    if (nzchar(dir))
        unlink(list.files(dir, pattern = "^plot-", full.names = TRUE))
}

top <- function(call) !is.null(call) && identical(call[[1]], quote(eval)) &&
    identical(call[[2]], quote(.llmsb_expr))

## as R's REPL words them: "Error in f() : msg" / "Error: msg", and
## "Warning message:\nIn f() : msg" / "Warning message:\nmsg"
say <- function(what, cond) {
    call <- conditionCall(cond)
    msg <- conditionMessage(cond)
    at <- if (is.null(call) || top(call)) "" else
        paste0(paste(deparse(call, nlines = 1L), collapse = ""), " : ")
    if (what == "Error")
        cat(if (nzchar(at)) paste0("Error in ", at) else "Error: ", msg, "\n", sep = "",
            file = stderr())
    else
        cat("Warning message:\n", if (nzchar(at)) paste0("In ", at), msg, "\n", sep = "",
            file = stderr())
}

call <- function(script) {
    exprs <- tryCatch(parse(script, keep.source = FALSE), error = function(e) e)
    if (inherits(exprs, "error")) {
        cat("Error in parse: ", conditionMessage(exprs), "\n", sep = "", file = stderr())
        return(1L)
    }
    for (.llmsb_expr in exprs) {
        failed <- FALSE
        withCallingHandlers(
            tryCatch({
                r <- withVisible(eval(.llmsb_expr, globalenv()))
                if (r$visible) print(r$value)
            }, error = function(e) {
                say("Error", e)
                failed <<- TRUE
            }),
            warning = function(w) {
                say("Warning", w)
                invokeRestart("muffleWarning")
            })
        if (failed) return(1L)
    }
    0L
}
