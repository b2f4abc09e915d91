// The benchmark's reading of the machine's CPU time (/proc/stat): the steal share it reports
// beside a run's figures, from the first line's fields, whatever the kernel's line carries.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { cpuTicks, cpuTicksOf, stealPercent } from '../../bench/machine.js'

const ticks = fc.integer({ min: 0, max: 2 ** 40 })

test('the totals are the first eight fields of the cpu line (guest time is already in user and nice), whatever follows', () => {
  fc.assert(fc.property(fc.array(ticks, { minLength: 10, maxLength: 10 }), fc.array(ticks, { maxLength: 4 }), (fields, perCpu) => {
    const text = [`cpu  ${fields.join(' ')}`, ...perCpu.map((n, i) => `cpu${i} ${n} 1 2 3 4 5 6 7 8 9`), 'intr 1 2 3', 'ctxt 99'].join('\n')
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields as [number, number, number, number, number, number, number, number]
    assert.deepEqual(cpuTicksOf(text), { total: user + nice + system + idle + iowait + irq + softirq + steal, steal })
  }))
})

test('an old kernel\'s line without steal counts none; a line that is not one gives nothing', () => {
  assert.deepEqual(cpuTicksOf('cpu  10 0 5 85\n'), { total: 100, steal: 0 })
  assert.equal(cpuTicksOf('intr 1 2 3\n'), undefined)
  assert.equal(cpuTicksOf('cpu  10 x 5 85\n'), undefined)
  assert.equal(cpuTicksOf('cpu  10 5\n'), undefined)
})

test('the steal share is the stolen part of the time between two readings', () => {
  assert.equal(stealPercent({ total: 1000, steal: 10 }, { total: 3000, steal: 110 }), 5)
  assert.equal(stealPercent({ total: 1000, steal: 10 }, { total: 1000, steal: 10 }), undefined)
  assert.equal(stealPercent(undefined, { total: 1000, steal: 10 }), undefined)
})

test('this machine\'s reading, where it has /proc/stat, moves forward', (t) => {
  const first = cpuTicks()
  if (first === undefined) {
    t.diagnostic('no /proc/stat here: the report names no steal')
    return
  }
  const second = cpuTicks()
  assert.ok(second !== undefined && second.total >= first.total && second.steal >= first.steal)
})
