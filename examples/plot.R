# A base-graphics plot and a ggplot2 one: each page comes back as a PNG
# artifact (plot-001.png, plot-002.png).
#   bin/llm-sandbox run --artifacts out/ examples/plot.R
library(ggplot2)

plot(cars, main = "Stopping distance", col = "steelblue", pch = 19)

p <- ggplot(mtcars, aes(wt, mpg, colour = factor(cyl))) +
    geom_point(size = 2) +
    labs(title = "Weight and mileage", colour = "cylinders")
print(p)

cat("drew 2 plots\n")
