// The settings of sync and change notifications (the post API's polling and webhooks): a part of
// the one settings table (src/settings.ts), in the same form.
import { POSTS, type Setting } from './setting-shape.js'
import { milliseconds, webhookSecret, webhookUrls } from './setting-values.js'

export const SYNC_SETTINGS = {
  SYNC_POLL_MS: {
    value: 'MS',
    default: '1000',
    help: 'post API: between two reads of every row while the change stream or webhooks follow a store without a change token (MySQL/MariaDB)',
    doc: 'Post API: while a client follows the change stream or webhooks are set, how often a store without a change token (MySQL/MariaDB) is read whole (every row\'s version) to find what changed: an event follows a commit within this time (reads start this long apart less the time a read takes). SQLite and PostgreSQL read their change token every 200 ms instead (within a second), and their rows only when it moved. See [Sync](api.md#sync-and-change-notifications).',
    schema: milliseconds(50),
    readBy: POSTS
  },
  WEBHOOK_URLS: {
    value: 'URLS',
    default: undefined,
    unset: 'no webhooks',
    help: 'post API: URLs POSTed a signed Standard Webhooks `posts.changed` per change, comma-separated (needs WEBHOOK_SECRET)',
    doc: 'Post API: receivers, comma-separated, each POSTed one signed [Standard Webhooks](https://www.standardwebhooks.com/) `posts.changed` per change (`webhook-id` is the change\'s token: receivers drop the copies several processes send of the same change), retried with back-off for an hour when it fails. Needs `WEBHOOK_SECRET`. See [Webhooks](api.md#webhooks).',
    schema: webhookUrls.optional(),
    readBy: POSTS
  },
  WEBHOOK_SECRET: {
    value: 'SECRET',
    default: undefined,
    unset: 'webhooks cannot be signed (WEBHOOK_URLS needs it)',
    help: 'post API: the webhooks\' signing key, `whsec_` then base64 of 24 to 64 random bytes',
    doc: 'Post API: the key webhooks are signed with (HMAC-SHA256, `webhook-signature: v1,…`): `whsec_` followed by base64 of 24 to 64 random bytes, as the Standard Webhooks libraries expect (`echo whsec_$(openssl rand -base64 32)`).',
    schema: webhookSecret.optional(),
    readBy: POSTS
  },
} as const satisfies Record<string, Setting>
