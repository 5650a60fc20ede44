## llm-sandbox plot capture for R, appended to the image's Rprofile.site.
## Inert unless SANDBOX_PLOTS_DIR is set (the worker sets it for jobs with
## plots on): then the default graphics device, which Rscript would open as
## Rplots.pdf, is a PNG device writing one file per page, so base plots and
## printed ggplot objects land in $SANDBOX_PLOTS_DIR/plot-NNN.png.  Nothing is
## printed and the program's source is not touched.
local({
    dir <- Sys.getenv("SANDBOX_PLOTS_DIR")
    if (nzchar(dir) && dir.exists(dir)) {
        options(device = function(...) {
            grDevices::png(file.path(dir, "plot-%03d.png"), width = 800, height = 600,
                           res = 96, type = "cairo")
        })
    }
})
