// Coalesces identical concurrent calls (front → upstream, post API → change token) without
// ever answering a request with a call that started before it arrived (SPEC "HTTP behaviour
// users expect"): latecomers share the next call, which starts when the running one ends.

const ignore = (): void => {}

interface Slot<T> {
  running: Promise<T>
  /** The call that starts when `running` ends, shared by everyone who arrived meanwhile. */
  next: Promise<T> | undefined
}

export interface Coalescer<T> {
  run: (key: string, call: () => Promise<T>) => Promise<T>
}

export function createCoalescer<T> (): Coalescer<T> {
  const slots = new Map<string, Slot<T>>()

  function start (key: string, call: () => Promise<T>): Promise<T> {
    const slot: Slot<T> = { running: call(), next: undefined }
    slots.set(key, slot)
    slot.running.then(ignore, ignore).then(() => {
      if (slots.get(key) === slot && slot.next === undefined) slots.delete(key)
    }, ignore)
    return slot.running
  }

  return {
    run (key, call) {
      const slot = slots.get(key)
      if (slot === undefined) return start(key, call)
      // The running call may have read the store before this request arrived: wait for the next.
      slot.next ??= slot.running.then(ignore, ignore).then(() => start(key, call))
      return slot.next
    }
  }
}
