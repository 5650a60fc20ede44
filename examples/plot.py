# Two matplotlib figures and a seaborn one: each comes back as a PNG
# artifact (plot-001.png ...) with nothing added to the code or the output.
#   bin/llm-sandbox run --artifacts out/ examples/plot.py
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 2 * np.pi, 200)

plt.figure(figsize=(6, 4))
plt.plot(x, np.sin(x), label="sin")
plt.plot(x, np.cos(x), label="cos")
plt.legend()
plt.title("Waves")
plt.show()

fig, ax = plt.subplots(figsize=(6, 4))
ax.hist(np.random.default_rng(7).normal(size=2000), bins=40, color="tab:green")
ax.set_title("A normal sample")
fig.savefig("histogram.png")   # saved where the program asks, and captured too

print("drew 2 figures")
