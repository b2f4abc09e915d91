import { postgresServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'
import { describeSchedule } from './schedule-suite.js'

describePublishing('PostgreSQL', postgresServer)
describeSchedule('PostgreSQL', postgresServer)
