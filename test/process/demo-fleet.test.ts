// `npm run demo:fleet` as `npm start` is run: a SIGTERM or SIGINT to npm's PID, which npm forwards
// to the demo's script, stops everything it started gracefully (each tier drains, none is killed
// for lingering): npm exits 0, no process below it is left, no port of the fleet listens, and its
// temporary folder is gone. Needs Debian's haproxy (and curl); mandatory in CI. How long the demo
// took to answer through HAProxy is reported, never asserted.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { test } from 'node:test'
import { assertBuilt } from '../helpers/built.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'
import { get } from '../helpers/http.js'
import { childrenOf, commandLine, descendantsOf, findExecutable, missing, startNpmScript } from '../helpers/server-processes.js'

/** Where Debian puts the programs the demo runs (root's PATH has /usr/sbin, a user's may not). */
const onPath = (name: string): string[] => [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin'].map((dir) => `${dir}/${name}`)
const absent = ['haproxy', 'curl'].filter((name) => findExecutable(onPath(name)) === undefined)
const skip = absent.length === 0 ? false : missing(`${absent.join(' and ')} ${absent.length === 1 ? 'is' : 'are'} not installed (apt-get install -y ${absent.join(' ')}, as root)`)

/** Far beyond the tiers' shutdown budget (SHUTDOWN_TIMEOUT_MS, set to 5 s below). */
const EXIT_GUARD_MS = 30_000
/** The ports the demo listens on, from its DEMO_PORT_BASE (scripts/demo-fleet.sh): HAProxy, its statistics, two fronts, two post APIs. */
const OFFSETS = [80, 404, 101, 102, 201, 202]

async function canListen (port: number): Promise<boolean> {
  const server = createServer()
  return await new Promise((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A DEMO_PORT_BASE whose ports are all free, below the ephemeral range (as freePort explains). */
async function freeBase (): Promise<number> {
  for (;;) {
    const base = 20_000 + 1000 * Math.floor(Math.random() * 12)
    if ((await Promise.all(OFFSETS.map(async (offset) => await canListen(base + offset)))).every(Boolean)) return base
  }
}

describeOrSkip('npm run demo:fleet stops on a signal to npm, leaving no process and no open port', { skip }, () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`npm run demo:fleet, then ${signal} to npm`, { timeout: 90_000 }, async (t) => {
      assertBuilt()
      const base = await freeBase()
      const ports = OFFSETS.map((offset) => base + offset)
      const started = performance.now()
      const npm = startNpmScript('demo:fleet', { DEMO_PORT_BASE: String(base), SHUTDOWN_TIMEOUT_MS: '5000' })
      let below: number[] = []
      try {
        await npm.served(/Ctrl-C stops everything/)
        const answer = await get(`http://127.0.0.1:${base + 80}`, '/api/blog/hello-world')
        assert.equal(answer.status, 200, 'served through HAProxy')
        t.diagnostic(`answered through HAProxy ${(performance.now() - started).toFixed(0)} ms after npm was started`)

        below = descendantsOf(npm.pid)
        assert.deepEqual(childrenOf(npm.pid).map(commandLine), ['bash scripts/demo-fleet.sh'], 'npm starts the demo\'s script, no shell in between')
        assert.ok(below.length >= 5, `the fleet runs below npm: ${below.map(commandLine).join(' | ')}`)
        const folder = /logs: +(\S+)\/logs\//.exec(npm.output())?.[1] ?? ''
        assert.ok(existsSync(folder), `its temporary folder (${folder}) exists while it runs`)

        await npm.assertStopsOn(signal, { guardMs: EXIT_GUARD_MS, below, ports })
        assert.doesNotMatch(npm.output(), /still running: killed/, 'every process drained and exited by itself')
        assert.equal(existsSync(folder), false, 'its temporary folder is removed')
      } finally {
        // Only when the test failed: nothing of this run may outlive it.
        npm.kill(below)
      }
    })
  }
})
