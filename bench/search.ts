// Measures search on a corpus of 10,000 posts of 600 words: the in-memory index (build, memory,
// two-word queries, one edit) and, on each engine with its own index, the two-word query as the
// store runs it (condition, rank, first 20), with the engine's plan of it.
//   node --expose-gc --import tsx bench/search.ts [--posts N] [--engines sqlite,postgres,mysql,memory]
// PostgreSQL and MariaDB come from TEST_POSTGRES_URL and TEST_MYSQL_URL (fresh databases, dropped after).
import { parseArgs } from 'node:util'
import { DEFAULT_SEARCH_SETTINGS } from '../src/search/compiled-search.js'
import { openMemorySearchIndex } from '../src/search/memory-search-index.js'
import { parseSearchQuery } from '../src/contract/search-query.js'
import { memoryTarget, mysqlTarget, postgresTarget, sqliteTarget, type SearchTarget } from '../test/search/search-targets.js'
import { createSearchCorpus, twoWordQueries, type SearchCorpus } from './search-corpus.js'

const { values: options } = parseArgs({ options: { posts: { type: 'string', default: '10000' }, engines: { type: 'string', default: 'memory,sqlite,postgres,mysql' } } })
const TARGETS: Record<string, SearchTarget> = { memory: memoryTarget, sqlite: sqliteTarget, postgres: postgresTarget, mysql: mysqlTarget }

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`

function percentiles (samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number
  return `p50 ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms, max ${at(1).toFixed(2)} ms (${samples.length} runs)`
}

function timed (run: () => void): number {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

async function timedAsync (run: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** Mid-frequency pairs (each word in roughly 5 to 50 % of the posts), and pairs of the commonest words. */
const queriesOf = (corpus: SearchCorpus) => ({ mid: twoWordQueries(corpus, 200, 50, 1000), common: twoWordQueries(corpus, 50, 0, 10, 3) })

function measureMemoryIndex (corpus: SearchCorpus): void {
  console.log('\n## In-memory FTS5 index')
  gc()
  const rssBefore = process.memoryUsage().rss
  const index = openMemorySearchIndex(DEFAULT_SEARCH_SETTINGS)
  console.log(`build of ${corpus.posts.length} posts: ${timed(() => index.rebuild(corpus.posts)).toFixed(0)} ms`)
  gc()
  console.log(`resident memory added: ${mb(process.memoryUsage().rss - rssBefore)}`)
  const { mid, common } = queriesOf(corpus)
  let matched = 0
  for (const q of mid.slice(0, 20)) index.search(parseSearchQuery(q)) // warm-up
  const midTimes = mid.map((q) => timed(() => { matched += index.search(parseSearchQuery(q)).length }))
  console.log(`two-word query, every match ranked (mean ${(matched / mid.length).toFixed(0)} matches): ${percentiles(midTimes)}`)
  let commonMatched = 0
  const commonTimes = common.map((q) => timed(() => { commonMatched += index.search(parseSearchQuery(q)).length }))
  console.log(`two common words (mean ${(commonMatched / common.length).toFixed(0)} matches): ${percentiles(commonTimes)}`)
  const edited = (i: number) => ({ ...corpus.posts[(i * 97) % corpus.posts.length] as SearchCorpus['posts'][number], content: (corpus.posts[(i * 31 + 7) % corpus.posts.length] as SearchCorpus['posts'][number]).content })
  const editTimes = Array.from({ length: 200 }, (_, i) => timed(() => index.apply({ upserted: [edited(i)] })))
  console.log(`one edit (a 600-word post replaced): ${percentiles(editTimes)}`)
  const deleteTimes = Array.from({ length: 50 }, (_, i) => timed(() => index.apply({ deleted: [(corpus.posts[i * 13] as { slug: string }).slug] })))
  console.log(`one delete: ${percentiles(deleteTimes)}`)
  console.log(`a batch of 100 edits: ${timed(() => index.apply({ upserted: Array.from({ length: 100 }, (_, i) => edited(i + 500)) })).toFixed(1)} ms`)
  index.close()
}

async function measureEngine (name: string, target: SearchTarget, corpus: SearchCorpus): Promise<void> {
  console.log(`\n## ${target.name}`)
  if (target.skip !== false) {
    console.log(`skipped: ${target.skip}`)
    return
  }
  const open = await target.open(DEFAULT_SEARCH_SETTINGS)
  try {
    console.log(`load of ${corpus.posts.length} posts, index kept up to date meanwhile: ${(await timedAsync(() => open.replacePosts(corpus.posts))).toFixed(0)} ms`)
    const { mid, common } = queriesOf(corpus)
    for (const q of mid.slice(0, 20)) await open.search(parseSearchQuery(q), 20)
    const midTimes: number[] = []
    for (const q of mid) midTimes.push(await timedAsync(() => open.search(parseSearchQuery(q), 20)))
    console.log(`two-word query, first 20 by relevance: ${percentiles(midTimes)}`)
    const commonTimes: number[] = []
    for (const q of common) commonTimes.push(await timedAsync(() => open.search(parseSearchQuery(q), 20)))
    console.log(`two common words, first 20: ${percentiles(commonTimes)}`)
    if (name !== 'memory') {
      const { sql, plan } = await open.explain(parseSearchQuery(mid[0] as string))
      console.log(`\nplan of \`${mid[0] as string}\`:\n\n\`\`\`\n${sql}\n\n${plan}\n\`\`\``)
    }
  } finally {
    await open.close()
  }
}

const corpus = createSearchCorpus({ posts: Number(options.posts) })
console.log(`# Search on ${corpus.posts.length} posts of 600 words (vocabulary ${corpus.vocabulary.length} words, Zipf)`)
for (const name of options.engines.split(',')) {
  const target = TARGETS[name]
  if (target === undefined) throw new Error(`unknown engine ${name}`)
  if (name === 'memory') measureMemoryIndex(corpus)
  else await measureEngine(name, target, corpus)
}
