// The chunked writer of streamed lists, against the text written whole: whatever the batches and
// the chunk size, the chunks join into exactly that text, and every chunk but the last is at least
// the chunk size, at most one item's text more.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { textInChunks } from '../../src/lib/text-chunks.js'

async function * batchesOf<T> (batches: readonly T[][]): AsyncIterable<readonly T[]> {
  for (const batch of batches) yield batch
}

async function chunksOf (stream: AsyncIterable<string>): Promise<string[]> {
  const chunks: string[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

test('chunks join into the items between open and close, each chunk but the last at least chunkChars and at most one item over', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 8 }), { maxLength: 12 }),
    fc.integer({ min: 1, max: 64 }),
    async (batches, chunkChars) => {
      const items = batches.flat()
      const chunks = await chunksOf(textInChunks(batchesOf(batches), { text: (item) => JSON.stringify(item), open: '[', separator: ',', close: ']', chunkChars }))
      assert.equal(chunks.join(''), JSON.stringify(items))
      const longest = Math.max(1, ...items.map((item) => JSON.stringify(item).length + 1))
      for (const chunk of chunks.slice(0, -1)) {
        assert.ok(chunk.length >= chunkChars, `a chunk of ${chunk.length} below ${chunkChars}`)
        assert.ok(chunk.length < chunkChars + longest + 1, `a chunk of ${chunk.length} beyond ${chunkChars} and one item`)
      }
    }), { numRuns: 300 })
})

test('no items: open and close alone, in one chunk', async () => {
  assert.deepEqual(await chunksOf(textInChunks(batchesOf([]), { text: String, open: '{"a":[', separator: ',', close: ']}' })), ['{"a":[]}'])
})
