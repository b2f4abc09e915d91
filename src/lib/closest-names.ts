// "Did you mean": the known names a mistyped one most likely meant, for the command line's
// unknown flags and commands.

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: optimal string alignment. */
export function editDistance (a: string, b: string): number {
  // rows[i][j]: distance between the first i characters of a and the first j of b.
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i === 0 ? j : j === 0 ? i : 0))
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Infinity
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1)
      const row = rows[i]
      if (row !== undefined) row[j] = best
    }
  }
  return at(a.length, b.length)
}

/**
 * The names of `known` that `given` most likely meant, best first: those a few edits away (a
 * typo: `blog-prot` → `blog-port`), else those it names a part of (`port` → `blog-port`,
 * `posts-port`, `admin-port`; parts are separated by `-`). Empty when nothing is close.
 */
export function closestNames (given: string, known: readonly string[]): string[] {
  const wanted = given.toLowerCase()
  // One edit in a short name, about one in three in a longer one: more would suggest anything.
  const allowed = Math.max(1, Math.floor(wanted.length / 3))
  const distances = known.map((name) => ({ name, distance: editDistance(wanted, name.toLowerCase()) }))
  const nearest = Math.min(...distances.map(({ distance }) => distance))
  if (nearest <= allowed) return distances.filter(({ distance }) => distance === nearest).map(({ name }) => name)
  const parts = wanted.split('-').filter((part) => part !== '')
  if (parts.length === 0) return []
  return known.filter((name) => {
    const nameParts = name.toLowerCase().split('-')
    return parts.every((part) => nameParts.includes(part)) || name.toLowerCase().startsWith(wanted)
  })
}
