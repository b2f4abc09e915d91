// Renders in a child process, so that a test can give up on a rendering that does not end (a
// test's own time-out cannot interrupt synchronous code; a process can be killed), and so that
// the rendering runs without the coverage instrumentation of the test run (NODE_V8_COVERAGE),
// which slows markdown-it's inner loops several times over and would turn this hang detector
// into a speed test of the instrumentation. The renderer's coverage comes from the other tests.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'

const CHILD = 'BLOG_READ_API_RENDER_CHILD'

if (process.env[CHILD] === '1' && process.send !== undefined) {
  const render = createMarkdownRenderer()
  process.on('message', (source: string) => {
    process.send?.(render(source).html, () => process.exit(0))
  })
}

/** The HTML of `source`, or a rejection when the rendering takes longer than `limitMs`. */
export async function renderWithin (source: string, limitMs: number): Promise<string> {
  const { NODE_V8_COVERAGE: _, ...env } = process.env
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...env, [CHILD]: '1' },
    execArgv: ['--import', import.meta.resolve('tsx')],
    serialization: 'advanced'
  })
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no rendering within ${limitMs} ms`)), limitMs)
      child.once('message', (html) => { clearTimeout(timer); resolve(html as string) })
      child.once('error', (err) => { clearTimeout(timer); reject(err) })
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the renderer exited with ${code} before answering`)) })
      child.send(source)
    })
  } finally {
    child.kill('SIGKILL')
  }
}
