import platform
import sys

name = sys.stdin.readline().strip() if not sys.stdin.isatty() else ""
print(f"hello {name or 'world'} from Python {platform.python_version()} in a sandbox")
