'use strict'
// {{#if (same a b)}}: two titles are the same text once their markup, character references
// and kinds of space are set aside (the home page's title is the guide's title).
const plain = (s) => String(s || '').replace(/<[^>]+>/g, '').replace(/&#160;|&nbsp;|[\u00a0\u202f]/g, ' ')
  .replace(/&#8217;/g, '\u2019').replace(/\s+/g, ' ').trim()
module.exports = (a, b) => plain(a) === plain(b)
