// The benchmark's scenarios, one entry each in SCENARIOS: what it sends, what it expects, its
// targets and the dataset it runs on. Which processes run which scenarios (the plan) is derived
// from the table, so adding a scenario is adding its entry.
import type { Dataset } from './dataset.js'
import type { RequestSequence, RequestSpec } from './load.js'
import { createRandom, pick, randomInt, type Random } from './random.js'
import { createSearchCorpus, postQueries } from './search-corpus.js'

export type Store = 'sqlite' | 'postgres' | 'mysql'

/** What a scenario's requests are made from. */
export interface RequestContext {
  /** The dataset's slugs, in list order. */
  readonly slugs: readonly string[]
  /** Each post's ETag as the target serves it (read first, for scenarios with `etags`). */
  readonly etags: ReadonlyMap<string, string>
  /** One cursor after each post in list order, the store's own (for scenarios with `pages`). */
  readonly cursors: readonly string[]
  /** Seeded the same for every target, so that the baseline and the service get the same sequence. */
  readonly random: Random
}

export interface Scenario<Name extends string = string> {
  /** The full run's dataset, in posts (`--smoke` runs every `smoke` scenario on SMOKE_POSTS of its dataset). */
  readonly posts: number
  /** Which posts (default `posts`; `search`: the search corpus's text and the store's search index). */
  readonly dataset?: Dataset
  readonly smoke?: boolean
  /** Processes of its own rather than those its dataset's other scenarios share. */
  readonly ownProcesses?: boolean
  readonly expectedStatus: number
  /** The requests, sent in order and cycled through. */
  readonly requests: (context: RequestContext) => RequestSequence
  /**
   * The targets for requests/s as a ratio to the baseline, per store. MySQL/MariaDB has none: its
   * store gives no posts version, so every answer is read afresh (docs/decisions.md), and its
   * figures are given as they are.
   */
  readonly minRatio?: Readonly<Partial<Record<Store, number>>>
  /** The p99 bound, in ms. */
  readonly maxP99Ms?: number
  /**
   * The target: its req/s at least this multiple of the naive Fastify peer's (bench/fastify-peer.ts,
   * Fastify with its defaults and nothing else), loaded in the same rounds as the baseline.
   */
  readonly minPeerRatio?: number
  /** Its bodies are megabytes: statuses are not counted one by one (see LoadOptions). */
  readonly largeBodies?: boolean
  /** Its requests carry the target's ETags (read from it before the scenario). */
  readonly etags?: boolean
  /** Its requests carry page cursors. */
  readonly pages?: boolean
  /** The front's keyed list of its shape is fetched before the warm-up (see primePages). */
  readonly keyedList?: boolean
  /** A few timed requests and each process's peak memory (MEMORY_RUN), instead of a load. */
  readonly memory?: boolean
  /**
   * A route the baseline does not have: the service alone is loaded, and its figures are ratios
   * to this scenario's, measured on the same processes (the plan runs it too).
   */
  readonly versus?: Name
  /** The target: CPU per request at most this multiple of the `versus` scenario's. */
  readonly maxCostRatio?: number
  /**
   * The target: its ratio to the baseline at least `share` of `scenario`'s (measured on that
   * one's own dataset, same store). The baseline does not serve this scenario, so its ratio is its
   * req/s over the baseline's for `scenario` on the same processes (which the plan runs there too):
   * the baseline would answer it from memory as it answers that one.
   */
  readonly minShareOf?: { readonly scenario: Name, readonly share: number }
  /** Measured on the service alone, as what others are measured against; no target of its own. */
  readonly reference?: boolean
  /** Settings of the service its processes run with (it has its own processes), where a default does not fit what it measures. */
  readonly settings?: Readonly<Record<string, string>>
}

/** The p99 bound of a 50-connection scenario; answers under 64 KB have the tighter one. */
const P99_MS = 25
const SMALL_P99_MS = 10
/** The same target on SQLite and PostgreSQL. */
const both = (ratio: number): Partial<Record<Store, number>> => ({ sqlite: ratio, postgres: ratio })
/** Rendered content and feeds cost at most this multiple of the plain reads they extend. */
const RENDERED_COST = 1.5
/** A held answer of a list query (count, cursor, search) costs at most this multiple of a held list page. */
const HELD_COST = 1.5

/** Requests in a random scenario's sequence (cycled through): far more than distinct choices. */
const SEQUENCE_LENGTH = 100_000
/** detail-20: the slugs it picks from, so that concurrent requests often ask for the same post. */
const FEW_SLUGS = 20

const repeat = (next: () => RequestSpec): RequestSpec[] => Array.from({ length: SEQUENCE_LENGTH }, next)
/** The same request every time. */
const always = (path: string) => (): RequestSequence => [{ path }]
/** A random post's detail (among the first `few` when given), with `search` after it. */
const randomPost = (search = '', few?: number) => ({ slugs, random }: RequestContext): RequestSequence => {
  const choices = few === undefined ? slugs : slugs.slice(0, few)
  return repeat(() => ({ path: `/api/blog/${pick(random, choices)}${search}` }))
}

/** What `page` asks for: a page of 20 posts' slug, title and date (the tiers put the fields in canonical order). */
export const PAGE_SIZE = 20
export const PAGE_FIELDS = ['slug', 'title', 'published_at'] as const
export const PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&fields=${PAGE_FIELDS.join(',')}`
/** What `sorted-page` asks for: the first page of every column in title order (code points). */
export const SORTED_PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&sort=title`

/** A held list answer: 20 posts, the size of a page of search results or a counted page. */
const LIST_PAGE = '/api/blog?limit=20'
/** Distinct searches in a sequence: each is ranked once per posts version, then its answer is held. */
const SEARCHES = 200
/**
 * The front's searches, as the work on list queries asks for them: two mid-frequency words
 * (each in roughly 5 to 50 % of the posts) of one post, 20 by relevance. The dataset's posts are
 * the corpus's first `slugs.length`.
 */
const searches = ({ slugs, random }: RequestContext): RequestSequence => {
  const queries = postQueries(createSearchCorpus({ posts: slugs.length }), SEARCHES, 50, 1000)
  return repeat(() => ({ path: `${LIST_PAGE}&q=${encodeURIComponent(pick(random, queries))}` }))
}
/** Each page of the list after the one before, from the first to the last, then again. */
const pageAfterPage = ({ cursors }: RequestContext): RequestSequence => [{ path: LIST_PAGE },
  ...cursors.filter((_, i) => (i + 1) % PAGE_SIZE === 0 && i + 1 < cursors.length).map((cursor) => ({ path: `${LIST_PAGE}&after=${cursor}` }))]

/** The table, checked so that `versus` names a scenario of it. */
function scenarioTable<const T extends { [Name in keyof T]: Scenario<Extract<keyof T, string>> }> (table: T): T {
  return table
}

// In the order they run (a dataset's processes start where its first scenario stands).
export const SCENARIOS = scenarioTable({
  // 76 KB: the larger p99 bound.
  'list-20': { posts: 20, smoke: true, expectedStatus: 200, requests: always('/api/blog'), minRatio: { sqlite: 0.80, postgres: 0.50 }, maxP99Ms: P99_MS },
  detail: { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost(), minRatio: { sqlite: 0.65, postgres: 0.40 }, maxP99Ms: SMALL_P99_MS },
  'detail-20': { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost('', FEW_SLUGS), minRatio: { sqlite: 0.30, postgres: 0.22 }, maxP99Ms: SMALL_P99_MS },
  'detail-304': {
    posts: 1000,
    smoke: true,
    expectedStatus: 304,
    etags: true,
    requests: ({ etags, random }) => {
      const tagged = [...etags]
      return repeat(() => {
        const [slug, etag] = pick(random, tagged)
        return { path: `/api/blog/${slug}`, ifNoneMatch: etag }
      })
    },
    minRatio: both(0.35),
    maxP99Ms: SMALL_P99_MS
  },
  missing: {
    posts: 1000,
    smoke: true,
    expectedStatus: 404,
    // Valid slugs that no post has (dataset slugs all start with `post-`).
    requests: ({ random }) => {
      const absent = Array.from({ length: 1000 }, () => `missing-${randomInt(random, 0, 2 ** 31).toString(36)}`)
      return repeat(() => ({ path: `/api/blog/${pick(random, absent)}` }))
    },
    minRatio: { sqlite: 0.60, postgres: 0.45 },
    maxP99Ms: SMALL_P99_MS
  },
  // The fixed cost of an answer, with every header, the request id, the access line and the metrics.
  invalid: { posts: 1000, smoke: true, expectedStatus: 400, requests: always('/api/blog/Not_A_Slug'), minPeerRatio: 0.9, maxP99Ms: SMALL_P99_MS },
  'list-1000': { posts: 1000, expectedStatus: 200, requests: always('/api/blog'), minRatio: { sqlite: 0.85, postgres: 0.65 }, largeBodies: true },
  // A page of 20 trimmed posts should come as close to the limit as the 20-post list. At a random
  // depth: the page after a random post but the last (near the end, a short last page).
  page: {
    posts: 100_000,
    ownProcesses: true,
    // Pages from memory: the shape's keyed list (22 MB) may take a quarter of the front's budget.
    settings: { CACHE_MAX_MB: '96' },
    smoke: true,
    expectedStatus: 200,
    pages: true,
    keyedList: true,
    requests: ({ cursors, random }) => {
      const starts = cursors.slice(0, -1)
      return repeat(() => ({ path: `${PAGE_PATH}&after=${pick(random, starts)}` }))
    },
    minRatio: { sqlite: 0.75, postgres: 0.50 },
    maxP99Ms: SMALL_P99_MS
  },
  // Figures only: no target was set for it.
  'sorted-page': { posts: 1000, smoke: true, expectedStatus: 200, requests: always(SORTED_PAGE_PATH), maxP99Ms: P99_MS },
  // Processes of its own, so that the memory run's peaks are its own.
  'list-100000': { posts: 100_000, ownProcesses: true, expectedStatus: 200, memory: true, requests: always('/api/blog'), minRatio: { sqlite: 0.25, postgres: 0.15 }, largeBodies: true },
  // Rendered content and feeds, which the baseline does not serve: each against the plain read it
  // extends, on the same dataset (renderings are made once per content, during the warm-up).
  'detail?formats=html': { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost('?formats=html'), versus: 'detail', maxCostRatio: RENDERED_COST },
  'list?limit=20&fields=slug,title,excerpt,reading_time': {
    posts: 20, smoke: true, expectedStatus: 200, requests: always('/api/blog?limit=20&fields=slug,title,excerpt,reading_time'), versus: 'list-20', maxCostRatio: RENDERED_COST
  },
  // A feed against a held list page of its size (bodies of 100,048 and 98,639 bytes here; a page
  // of 20, 76,372, would charge it for its bytes: sending is most of an answer this large).
  'list?limit=26': { posts: 1000, smoke: true, expectedStatus: 200, requests: always('/api/blog?limit=26'), reference: true },
  'feed.xml': { posts: 1000, smoke: true, expectedStatus: 200, requests: always('/feed.xml'), versus: 'list?limit=26', maxCostRatio: RENDERED_COST },
  // List queries, which the baseline does not serve either: each against a held list page of 20
  // posts on the same processes (the list page runs wherever one of them does).
  'list?limit=20': { posts: 1000, smoke: true, expectedStatus: 200, requests: always(LIST_PAGE), reference: true },
  'list?limit=20&count=exact': {
    posts: 1000, smoke: true, expectedStatus: 200, requests: always(`${LIST_PAGE}&count=exact`), versus: 'list?limit=20', maxCostRatio: HELD_COST, maxP99Ms: P99_MS
  },
  'list?limit=20&count=exact&tag=performance': {
    posts: 1000, smoke: true, expectedStatus: 200, requests: always(`${LIST_PAGE}&count=exact&tag=performance`), versus: 'list?limit=20', maxCostRatio: HELD_COST, maxP99Ms: P99_MS
  },
  'list?limit=20&after=cursor': {
    posts: 1000, smoke: true, expectedStatus: 200, pages: true, requests: pageAfterPage, versus: 'list?limit=20', maxCostRatio: HELD_COST, maxP99Ms: P99_MS
  },
  // Search over 10,000 posts of 600 words, with the store's index: held answers against a held
  // list page of the same size, and at least half the detail's ratio to the baseline.
  'list?limit=20&q=words': {
    posts: 10_000,
    dataset: 'search',
    smoke: true,
    expectedStatus: 200,
    requests: searches,
    versus: 'list?limit=20',
    maxCostRatio: HELD_COST,
    minShareOf: { scenario: 'detail', share: 0.5 },
    maxP99Ms: P99_MS
  }
})

export type ScenarioName = keyof typeof SCENARIOS
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[]
/** A scenario's entry, with every property of the type (absent or not). */
export const scenarioOf = (name: ScenarioName): Scenario<ScenarioName> => SCENARIOS[name]

/** list-100000's targets: every process stays under this peak RSS, and the first byte comes within a second. */
export const MEMORY_RUN = { maxRssMb: 200, maxFirstByteMs: 1000, sequential: 3, concurrent: 5 } as const

/** `--smoke`: every `smoke` scenario, on these datasets, one set of processes each (a search corpus of 20 posts would match next to nothing). */
export const SMOKE_POSTS: Readonly<Record<Dataset, number>> = { posts: 20, search: 500 }

/** A dataset, served by its own processes, and the scenarios run on them. */
export interface Phase {
  readonly dataset: Dataset
  readonly posts: number
  readonly scenarios: readonly ScenarioName[]
}

/** Whether the baseline answers it too (otherwise the service alone is loaded). */
export const baselineServes = (name: ScenarioName): boolean => scenarioOf(name).versus === undefined && scenarioOf(name).reference !== true

/** The scenarios `name`'s figures are taken against, run on its processes before it. */
const referencesOf = (name: ScenarioName): ScenarioName[] => {
  const { versus, minShareOf } = scenarioOf(name)
  return [versus, minShareOf?.scenario].filter((reference) => reference !== undefined)
}

/** The dataset a scenario runs on, when it runs for itself (not as another's reference). */
export function homeOf (name: ScenarioName, smoke: boolean): { dataset: Dataset, posts: number } {
  const { dataset = 'posts', posts } = scenarioOf(name)
  return { dataset, posts: smoke ? SMOKE_POSTS[dataset] : posts }
}

/** The phases that run `selected` (and the scenarios they are measured against), in table order. */
export function planOf (selected: ReadonlySet<ScenarioName>, smoke: boolean): Phase[] {
  const phases: Array<{ dataset: Dataset, posts: number, wanted: Set<ScenarioName> }> = []
  const shared = new Map<string, (typeof phases)[number]>()
  // A `minShareOf` target also needs that scenario on its own dataset.
  const runs = new Set([...selected, ...[...selected].flatMap((name) => scenarioOf(name).minShareOf?.scenario ?? [])])
  for (const name of SCENARIO_NAMES) {
    const scenario = scenarioOf(name)
    if (!runs.has(name) || (smoke && scenario.smoke !== true)) continue
    const { dataset, posts } = homeOf(name, smoke)
    if (scenario.ownProcesses === true && !smoke) {
      phases.push({ dataset, posts, wanted: new Set([name]) })
      continue
    }
    let phase = shared.get(`${dataset} ${posts}`)
    if (phase === undefined) {
      phase = { dataset, posts, wanted: new Set() }
      shared.set(`${dataset} ${posts}`, phase)
      phases.push(phase)
    }
    for (const wanted of [...referencesOf(name), name]) phase.wanted.add(wanted)
  }
  return phases.map(({ dataset, posts, wanted }) => ({ dataset, posts, scenarios: SCENARIO_NAMES.filter((name) => wanted.has(name)) }))
}

// A scenario measured against others runs after them (earlier in the table), on the same
// processes, so neither it nor they have processes of their own, and they are loads.
for (const [index, name] of SCENARIO_NAMES.entries()) {
  for (const reference of referencesOf(name)) {
    const plain = scenarioOf(reference)
    if (SCENARIO_NAMES.indexOf(reference) > index || scenarioOf(name).ownProcesses === true || plain.ownProcesses === true || plain.memory === true) {
      throw new Error(`scenario ${name}: it is measured against ${reference}, so that runs on its processes, before it`)
    }
  }
}

const SEED = 20240501

/** What scenario `name` sends, from a PRNG seeded alike for every target. */
export function requestSequence (name: ScenarioName, context: Omit<RequestContext, 'random'>): RequestSequence {
  return scenarioOf(name).requests({ ...context, random: createRandom(SEED) })
}
