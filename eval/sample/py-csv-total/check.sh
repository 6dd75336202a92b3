set -e
test "$(python3 total.py)" = "9.75"
printf 'item,amount\nx,1\ny,2\n' > other.csv
python3 -c 'import total; assert total.total("other.csv") == 3'
