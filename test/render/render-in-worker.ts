// Renders in a worker thread, so that a test can give up on a rendering that does not end: a
// test's own time-out cannot interrupt synchronous code, a worker can be terminated.
import { parentPort, Worker } from 'node:worker_threads'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'

if (parentPort !== null) {
  const render = createMarkdownRenderer()
  const port = parentPort
  port.on('message', (source: string) => { port.postMessage(render(source).html) })
}

/** The HTML of `source`, or a rejection when the rendering takes longer than `limitMs`. */
export async function renderWithin (source: string, limitMs: number): Promise<string> {
  // The worker loads this TypeScript file as the test runner does, through tsx, registered first
  // (a worker's `--import` does not reach its entry module on every Node line).
  const entry = JSON.stringify(import.meta.url)
  const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${entry}) })`, { eval: true })
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no rendering within ${limitMs} ms`)), limitMs)
      worker.once('message', (html: string) => { clearTimeout(timer); resolve(html) })
      worker.once('error', (err) => { clearTimeout(timer); reject(err) })
      worker.postMessage(source)
    })
  } finally {
    await worker.terminate()
  }
}
