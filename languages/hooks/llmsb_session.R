## llm-sandbox session for R: one process runs every call of a session in
## one global environment (variables, attached packages and open
## connections persist), started by llmsb_zygote.R.  Each call's file is
## parsed and its expressions evaluated at the top level in turn, visible
## values printed, as R's REPL does; an error ends the call (status 1) as
## "Error in CALL : MESSAGE" on stderr, not the session; warnings are
## told after the expression that raised them; quit() ends the session.
## Unlike R's REPL: the expressions run inside this loop (sys.nframe() is
## not 0, parent.frame() at the top is not the global environment), and a
## file that does not parse runs nothing.
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

top <- function(call) is.call(call) && identical(call[[1]], quote(eval)) &&
    length(call) > 1L && identical(call[[2]], quote(.llmsb_expr))

## an error as R's REPL words it: "Error in f() : msg" (the message on a
## line of its own when the two would be long), "Error: msg" at the top
say_error <- function(cond) {
    call <- conditionCall(cond)
    msg <- conditionMessage(cond)
    if (is.null(call) || top(call)) {
        cat("Error: ", msg, "\n", sep = "", file = stderr())
        return(invisible())
    }
    dcall <- deparse(call, nlines = 1L)
    prefix <- paste("Error in", dcall, ": ")
    w <- 14L + nchar(dcall, type = "w") + nchar(strsplit(msg, "\n")[[1L]][1L], type = "w")
    if (!is.na(w) && w > 75L)
        prefix <- paste0(prefix, "\n  ")
    cat(prefix, msg, "\n", sep = "", file = stderr())
}

## Each expression at the top in turn; warnings go R's own way (the warn
## option: deferred ones printed after the expression as R prints them,
## "Warning message:" or "Warning messages:"; warn = 1 at once; 2 errors).
call <- function(script) {
    exprs <- tryCatch(parse(script, keep.source = FALSE), error = function(e) e)
    if (inherits(exprs, "error")) {
        cat("Error in parse: ", conditionMessage(exprs), "\n", sep = "", file = stderr())
        return(1L)
    }
    for (.llmsb_expr in exprs) {
        failed <- warned <- FALSE
        tryCatch(withCallingHandlers({
            r <- withVisible(eval(.llmsb_expr, globalenv()))
            if (r$visible) print(r$value)
        }, warning = function(w) {
            warned <<- TRUE
            untop(w)
        }), error = function(e) {
            say_error(e)
            failed <<- TRUE
        })
        if (warned) warnings_after(failed)
        if (failed) return(1L)
    }
    0L
}

## A warning raised at the top (its call this loop's eval) as R's REPL has
## it: with no call.  Signalled anew past this handler, it takes R's own way.
untop <- function(w) {
    if (!top(conditionCall(w))) return()
    w$call <- NULL
    warning(w)
    invokeRestart("muffleWarning")
}

## The deferred warnings, printed by R itself (which sets last.warning);
## its "In addition: " prefix only after an error, as in R's REPL.
warnings_after <- function(failed) {
    to <- sink.number(type = "message")
    con <- if (to == 2L) stderr() else getConnection(to)
    tc <- textConnection(NULL, "w")
    sink(tc, type = "message")
    .Internal(printDeferredWarnings())
    sink(con, type = "message")
    out <- textConnectionValue(tc)
    close(tc)
    if (!length(out)) return(invisible())
    out <- paste0(out, "\n", collapse = "")
    cat(if (failed) out else sub("^In addition: ", "", out), file = con)
}
