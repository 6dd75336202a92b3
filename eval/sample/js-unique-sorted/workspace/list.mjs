export function uniqueSorted(list) {
  return [...new Set(list)].sort();
}
