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
        warnings_after(FALSE) # what closing the devices or finalizers raised
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

## this loop's own frames: the evaluation of an expression, the printing
## of its value
top <- function(call) is.call(call) && identical(call[[1]], quote(eval)) &&
    length(call) > 1L && (identical(call[[2]], quote(.llmsb_expr)) ||
                          identical(call[[2]], quote(.llmsb_print)))

## A visible value printed as R's REPL prints it: an object by print(x)
## (show(x) if S4), the function itself in the call, x bound in a new
## environment (so print methods and their errors see "x").
show_value <- function(v) {
    if (!is.object(v) && !is.function(v))
        return(invisible(print(v)))
    env <- new.env(parent = globalenv())
    assign("x", v, envir = env)
    .llmsb_print <- as.call(list(if (isS4(v)) methods::show else base::print, quote(x)))
    eval(.llmsb_print, env)
}

## The functions the error was raised in (sys.calls() in the handler), as
## R's context stack at that point: this loop's frames and the handler's
## own left out; a foreign call (.Call, .C ...) has a context there too.
error_frames <- function(calls, cond) {
    ours <- which(vapply(calls, top, NA))
    if (!length(ours)) return(list())
    from <- max(ours) + 1L
    hse <- which(vapply(calls, function(x) identical(x[[1L]], quote(.handleSimpleError)), NA))
    to <- if (length(hse <- hse[hse >= from])) min(hse) - 1L else length(calls) - 1L
    frames <- if (to >= from) calls[from:to] else list()
    cc <- conditionCall(cond)
    foreign <- c(".C", ".Fortran", ".External", ".External2", ".Call", ".External.graphics",
                 ".Call.graphics")
    if (is.call(cc) && is.symbol(cc[[1L]]) && as.character(cc[[1L]]) %in% foreign)
        frames <- c(frames, list(cc))
    frames
}

fname <- function(call) if (is.symbol(call[[1L]])) as.character(call[[1L]]) else "<Anonymous>"

## R's "Calls:" line (R_ConciseTraceback): innermost last, started anew at
## stop() or warning(), "..." past showNCalls characters, "" when it says
## no more than the error's own call
concise <- function(frames, cond_call) {
    buf <- ""
    ncalls <- 0L
    too_many <- FALSE
    first <- ""
    for (f in rev(frames)) {
        this <- fname(f)
        if (this %in% c("stop", "warning", "suppressWarnings", ".signalSimpleWarning")) {
            buf <- ""
            ncalls <- 0L
            too_many <- FALSE
        } else {
            ncalls <- ncalls + 1L
            if (too_many) {
                first <- this
            } else if (nchar(buf, "bytes") > getOption("showNCalls", 50L)) {
                buf <- paste0("... ", buf)
                too_many <- TRUE
                first <- this
            } else buf <- if (nzchar(buf)) paste(this, "->", buf) else this
        }
    }
    if (too_many && nchar(first, "bytes") < 50L)
        buf <- paste(first, buf)
    if (ncalls == 1L && is.call(cond_call) && buf == fname(cond_call)) "" else buf
}

## an error as R's REPL words it: "Error in f() : msg" (the message on a
## line of its own when the two would be long), "Error: msg" at the top,
## then "Calls: f -> g" (showErrorCalls, on in Rscript); nothing when
## show.error.messages is off
say_error <- function(cond, frames) {
    if (!isTRUE(getOption("show.error.messages", TRUE))) return(invisible())
    call <- conditionCall(cond)
    msg <- conditionMessage(cond)
    nl <- if (endsWith(msg, "\n")) "" else "\n"
    if (is.null(call) || top(call)) {
        cat("Error: ", msg, nl, sep = "", file = stderr())
        return(invisible())
    }
    dcall <- deparse(call, nlines = 1L)
    prefix <- paste("Error in", dcall, ": ")
    w <- 14L + nchar(dcall, type = "w") + nchar(strsplit(msg, "\n")[[1L]][1L], type = "w")
    if (!is.na(w) && w > 75L)
        prefix <- paste0(prefix, "\n  ")
    trace <- if (isTRUE(getOption("showErrorCalls"))) concise(frames, call) else ""
    cat(prefix, msg, nl, if (nzchar(trace)) paste0("Calls: ", trace, "\n"), sep = "",
        file = stderr())
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
        frames <- list()
        tryCatch(withCallingHandlers({
            r <- withVisible(eval(.llmsb_expr, globalenv()))
            if (r$visible) show_value(r$value)
        }, warning = function(w) {
            warned <<- TRUE
            untop(w)
        }, error = function(e) frames <<- error_frames(sys.calls(), e)),
        error = function(e) {
            say_error(e, frames)
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
    op <- options(show.error.messages = TRUE) # R prints them regardless
    .Internal(printDeferredWarnings())
    options(op)
    sink(con, type = "message")
    out <- textConnectionValue(tc)
    close(tc)
    if (!length(out)) return(invisible())
    out <- paste0(out, "\n", collapse = "")
    cat(if (failed) out else sub("^In addition: ", "", out), file = con)
}
