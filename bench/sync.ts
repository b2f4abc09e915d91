// What sync costs a post API per read of the whole table, on the benchmark's posts (about 600
// words each): a row version per post (for stores without one of their own), the state's token,
// and the comparison with the previous state. Figures are the median of several rounds, printed
// as a table; nothing is asserted (the machine's load moves them).
//   npm run bench:sync [-- --posts 10000 --words 600 --rounds 7]
import { parseArgs } from 'node:util'
import { rowVersion } from '../src/sync/row-version.js'
import { stateToken } from '../src/sync/state-token.js'
import { createStateTracker } from '../src/sync/state-tracker.js'
import { generatePost } from './dataset.js'

const { values } = parseArgs({ options: { posts: { type: 'string', default: '10000' }, words: { type: 'string', default: '600' }, rounds: { type: 'string', default: '7' } } })
const postCount = Number(values.posts)
const wordCount = Number(values.words)
const rounds = Number(values.rounds)

/** `content` made `count` words long: cut, or carried on with its own words from the start. */
function fitWords (content: string, count: number): string {
  const words = content.split(/(?<=\s)(?=\S)/)
  return Array.from({ length: count }, (_, i) => words[i % words.length]).join('')
}

// As the post API serves them: `tags` parsed, every column a property.
const rows = Array.from({ length: postCount }, (_, i) => {
  const post = generatePost(i)
  return { ...post, content: fitWords(post.content, wordCount), tags: JSON.parse(post.tags) as string[] }
})

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Median milliseconds of `run` over the rounds, after one round of warm-up. */
function measure (run: () => void): number {
  run()
  return median(Array.from({ length: rounds }, () => {
    const start = performance.now()
    run()
    return performance.now() - start
  }))
}

let versions = new Map<string, string>()
const hashMs = measure(() => {
  versions = new Map(rows.map((row) => [row.slug, rowVersion(row)]))
})
// For scale: what serialising each post once costs (the post API does it for every answer).
const serialiseMs = measure(() => { for (const row of rows) JSON.stringify(row) })
const tokenMs = measure(() => { stateToken(versions) })
const edited = new Map(versions)
edited.set(rows[0]?.slug ?? '', 'edited')
const observeMs = measure(() => {
  const tracker = createStateTracker()
  tracker.observe(versions)
  tracker.observe(edited)
})

const words = Math.round(rows.reduce((sum, row) => sum + row.content.trim().split(/\s+/).length, 0) / rows.length)
const chars = Math.round(rows.reduce((sum, row) => sum + row.content.length, 0) / rows.length)
console.log(`| ${postCount} posts of ${words} words (${chars} characters of Markdown), ${rounds} rounds (median), Node ${process.version} | ms | µs per post |`)
console.log('|---|---:|---:|')
console.log(`| row versions (canonical form + SHA-256) | ${hashMs.toFixed(0)} | ${(hashMs * 1000 / postCount).toFixed(1)} |`)
console.log(`| for scale: JSON.stringify of each post | ${serialiseMs.toFixed(0)} | ${(serialiseMs * 1000 / postCount).toFixed(1)} |`)
console.log(`| state token (sort + SHA-256 of the pairs) | ${tokenMs.toFixed(1)} | ${(tokenMs * 1000 / postCount).toFixed(2)} |`)
console.log(`| two observations (2 tokens + 1 comparison) | ${observeMs.toFixed(1)} | ${(observeMs * 1000 / postCount).toFixed(2)} |`)
