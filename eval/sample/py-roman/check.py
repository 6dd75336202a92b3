import sys
sys.path.insert(0, ".")
from roman import to_roman
cases = {1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 90: "XC", 400: "CD", 944: "CMXLIV", 1994: "MCMXCIV", 3999: "MMMCMXCIX"}
for n, want in cases.items():
    assert to_roman(n) == want, (n, to_roman(n), want)
