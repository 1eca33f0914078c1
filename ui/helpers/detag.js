'use strict'
// Page titles may carry inline markup (<code>...); the <title> element needs plain text.
module.exports = (html) => (html ? String(html).replace(/<[^>]+>/g, '') : '')
