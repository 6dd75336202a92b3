set -e
rm -rf backup
sh backup.sh
cmp notes.txt backup/notes.txt
cmp todo.txt backup/todo.txt
sh backup.sh
