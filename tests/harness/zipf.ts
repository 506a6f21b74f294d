/**
 * Draws an index of `count` items under Zipf's law with exponent 1: the k-th busiest gets 1/k of the
 * first's share (a few busy repositories, a long tail), from the uniform source `random`.
 */
export function zipfPicker(count: number, random: () => number = Math.random): () => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let k = 1; k <= count; k++) cumulative.push((total += 1 / k));
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
