#!/bin/sh
set -e
cp ./*.txt backup/
