// Coalesces identical concurrent calls (front → upstream, post API → change token) without
// ever answering a request with a call that started before it arrived: latecomers share the next
// call, which starts when the running one ends, unless
// none of them still waits for it by then (no work for requests nobody will read).

const ignore = (): void => {}
const always = (): boolean => true

/** The next call was not made: everyone who would have shared it had gone. */
export class AbandonedCallError extends Error {
  constructor () {
    super('nobody waits for this call any more')
    this.name = 'AbandonedCallError'
  }
}

interface Slot<T> {
  running: Promise<T>
  /** The call that starts when `running` ends, shared by everyone who arrived meanwhile. */
  next: Promise<T> | undefined
  /** Whether each of those still waits. */
  nextWanted: Array<() => boolean>
}

export interface Coalescer<T> {
  /**
   * `call` at once when none runs for `key`; else the next call, shared by all who arrive
   * meanwhile. `wanted` tells whether the caller still waits for the answer: a next call that
   * none of its callers wants any more is not made, and rejects with AbandonedCallError.
   */
  run: (key: string, call: () => Promise<T>, wanted?: () => boolean) => Promise<T>
}

/** `onJoin`: told each time a caller joins the next call instead of starting one (the metrics). */
export function createCoalescer<T> (onJoin?: () => void): Coalescer<T> {
  const slots = new Map<string, Slot<T>>()

  function start (key: string, call: () => Promise<T>): Promise<T> {
    const slot: Slot<T> = { running: call(), next: undefined, nextWanted: [] }
    slots.set(key, slot)
    slot.running.then(ignore, ignore).then(() => {
      if (slots.get(key) === slot && slot.next === undefined) slots.delete(key)
    }, ignore)
    return slot.running
  }

  return {
    run (key, call, wanted = always) {
      const slot = slots.get(key)
      if (slot === undefined) return start(key, call)
      // The running call may have read the store before this request arrived: wait for the next.
      onJoin?.()
      slot.nextWanted.push(wanted)
      slot.next ??= slot.running.then(ignore, ignore).then(() => {
        if (slot.nextWanted.some((isWanted) => isWanted())) return start(key, call)
        if (slots.get(key) === slot) slots.delete(key)
        throw new AbandonedCallError()
      })
      return slot.next
    }
  }
}
