import { mysqlServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'

describePublishing('MySQL/MariaDB', mysqlServer)
