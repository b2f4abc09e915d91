// A deterministic corpus for measuring search: posts of about 600 words drawn from a vocabulary of
// made-up words with Zipf-distributed frequencies (as words of real text are), so that a query of
// two mid-frequency words matches a few percent of the posts and one of two common words most.
import { createRandom, randomInt, type Random } from './random.js'

const SYLLABLES = ['ka', 'lo', 'mi', 'ser', 'tan', 'vo', 'pel', 'dri', 'qua', 'nor', 'bes', 'fu', 'gar', 'hin', 'jul', 'rem', 'sta', 'wex', 'yo', 'zin']

export interface SearchCorpus {
  /** Words by frequency rank: the first is the most frequent. */
  readonly vocabulary: readonly string[]
  readonly posts: ReadonlyArray<{ slug: string, title: string, summary: string, content: string }>
}

/** `count` distinct made-up words of 2 to 4 syllables. */
function makeVocabulary (random: Random, count: number): string[] {
  const words = new Set<string>()
  while (words.size < count) {
    words.add(Array.from({ length: randomInt(random, 2, 4) }, () => SYLLABLES[randomInt(random, 0, SYLLABLES.length - 1)]).join(''))
  }
  return [...words]
}

/** Draws word ranks with probability proportional to 1/rank. */
function zipf (random: Random, size: number): () => number {
  const cumulative = new Float64Array(size)
  let total = 0
  for (let rank = 0; rank < size; rank++) cumulative[rank] = total += 1 / (rank + 1)
  return () => {
    const target = random() * total
    let low = 0
    let high = size - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if ((cumulative[middle] as number) < target) low = middle + 1
      else high = middle
    }
    return low
  }
}

export function createSearchCorpus ({ posts = 10_000, words = 600, vocabulary = 8000, seed = 1 } = {}): SearchCorpus {
  const random = createRandom(seed)
  const dictionary = makeVocabulary(random, vocabulary)
  const draw = zipf(random, dictionary.length)
  const text = (n: number): string => Array.from({ length: n }, () => dictionary[draw()]).join(' ')
  return {
    vocabulary: dictionary,
    posts: Array.from({ length: posts }, (_, i) => ({
      slug: `post-${String(i).padStart(5, '0')}`,
      title: text(randomInt(random, 3, 8)),
      summary: text(30),
      content: text(words)
    }))
  }
}

/** `count` queries of two words, each of frequency rank `from` to `to`, the same on every run. */
export function twoWordQueries (corpus: Pick<SearchCorpus, 'vocabulary'>, count: number, from: number, to: number, seed = 2): string[] {
  const random = createRandom(seed)
  const word = (): string => corpus.vocabulary[randomInt(random, from, to)] as string
  return Array.from({ length: count }, () => `${word()} ${word()}`)
}

/**
 * `count` queries of two words, each of frequency rank `from` to `to`, both from one post's
 * content (so that every query matches at least that post), the same on every run.
 */
export function postQueries (corpus: SearchCorpus, count: number, from: number, to: number, seed = 2): string[] {
  const random = createRandom(seed)
  const rank = new Map(corpus.vocabulary.map((word, i) => [word, i]))
  return Array.from({ length: count }, () => {
    const post = corpus.posts[randomInt(random, 0, corpus.posts.length - 1)] as SearchCorpus['posts'][number]
    const words = post.content.split(' ').filter((word) => { const r = rank.get(word) as number; return r >= from && r <= to })
    return `${words[randomInt(random, 0, words.length - 1)] as string} ${words[randomInt(random, 0, words.length - 1)] as string}`
  })
}
