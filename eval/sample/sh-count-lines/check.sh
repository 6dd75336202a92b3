set -e
printf 'a\n\nb\n\n\nc\n' > sample.txt
test "$(sh count.sh sample.txt)" = "3"
printf '\n' > empty.txt
test "$(sh count.sh empty.txt)" = "0"
