// Time as part of freshness. Under the publishing rule, what the reads return changes when a
// scheduled post's instant passes, with no write to the store: so the change token is labelled
// with the next scheduled instant (the smallest `published_at` later than now among the rows the
// rule would otherwise show), and once the clock reaches it the label moves, exactly as a commit
// moves the token. Whatever was built or held under the old label (the post API's bodies, the
// front's copies confirmed by version) is then served no more.
//
// The instant is read from the store once per token, and again only when it passes: no query
// per request.
import { withScheduledInstant } from '../contract/posts-schedule.js'

export interface Schedule {
  /** `token` labelled with the next scheduled instant now (as it stands under `token`). */
  label: (token: string) => Promise<string>
}

/** `readNext(nowMs)`: the next scheduled instant after `nowMs` (ms since the epoch), undefined when none. */
export function createSchedule (readNext: (nowMs: number) => Promise<number | undefined>, now: () => number): Schedule {
  let known: { token: string, next: number | undefined } | undefined
  let reading: { token: string, read: Promise<number | undefined> } | undefined

  function startRead (token: string, at: number): Promise<number | undefined> {
    const read = readNext(at)
    reading = { token, read }
    read.then((next) => {
      if (reading?.read !== read) return
      reading = undefined
      known = { token, next }
    }, () => {
      if (reading?.read === read) reading = undefined
    })
    return read
  }

  async function nextFor (token: string): Promise<number | undefined> {
    const at = now()
    if (known?.token === token && (known.next === undefined || at < known.next)) return known.next
    // A read in flight under the same token started before this request: its answer serves
    // unless the instant it found has passed meanwhile.
    if (reading?.token === token) {
      const next = await reading.read
      if (next === undefined || at < next) return next
    }
    return await startRead(token, at)
  }

  return {
    label: async (token) => withScheduledInstant(token, await nextFor(token))
  }
}
