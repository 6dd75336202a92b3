import csv


def total(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return sum(float(row[1]) for row in rows[1:-1])


if __name__ == "__main__":
    print(f"{total('sales.csv'):.2f}")
