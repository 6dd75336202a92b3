import sys
sys.path.insert(0, ".")
from text import slugify
cases = {"Hello, World!": "hello-world", "  A  B  ": "a-b", "v2.0 release": "v2-0-release", "---": "", "MiXeD_case": "mixed-case"}
for text, want in cases.items():
    assert slugify(text) == want, (text, slugify(text), want)
