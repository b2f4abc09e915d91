// The posts `seed` writes and a fresh default database starts with.

interface SamplePost {
  slug: string
  title: string
  summary: string
  content: string
  author: string
  tags: string[]
  published_at: Date
  updated_at: Date
}

export const SAMPLE_POSTS: readonly SamplePost[] = [
  {
    slug: 'hello-world',
    title: 'Hello, world',
    summary: 'The first post of this blog, served by Blog Read API.',
    content: '# Hello, world\n\nThis post comes from the `posts` table, through the upstream post API and the front API.\n',
    author: 'Ada',
    tags: ['intro'],
    published_at: new Date('2026-01-05T09:00:00.000Z'),
    updated_at: new Date('2026-01-05T09:00:00.000Z')
  },
  {
    slug: 'two-tiers',
    title: 'Why two tiers',
    summary: 'The public front never touches the database; it asks the post API.',
    content: '## Two tiers\n\n- the **front API** validates slugs and maps failures;\n- the **post API** reads the store.\n',
    author: 'Grace',
    tags: ['architecture', 'http'],
    published_at: new Date('2026-02-10T14:30:00.000Z'),
    updated_at: new Date('2026-02-12T08:15:00.000Z')
  },
  {
    slug: 'slugs-and-stores',
    title: 'Slugs and stores',
    summary: 'SQLite by default, PostgreSQL to scale out, MySQL and MariaDB too.',
    content: '## Slugs\n\nA slug is lower-case letters and digits joined by single hyphens, such as `slugs-and-stores`.\n',
    author: 'Ada',
    tags: ['sql', 'slugs'],
    published_at: new Date('2026-03-01T07:45:00.000Z'),
    updated_at: new Date('2026-03-01T07:45:00.000Z')
  }
]
