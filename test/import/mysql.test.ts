import { mysqlServer } from '../helpers/databases.js'
import { describeImport } from './import-suite.js'

describeImport('MySQL/MariaDB', mysqlServer, {
  operatorTable: `CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL UNIQUE,
    title VARCHAR(500) NOT NULL CHECK (CHAR_LENGTH(title) <= 20), content TEXT, category VARCHAR(50), featured BOOLEAN, extra JSON,
    published_at DATETIME(3)) CHARACTER SET utf8mb4`
})
