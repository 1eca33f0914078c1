'use strict'
// {{#each (editions page.versions)}}: the page's editions in one fixed order, English (the
// unversioned edition) first, then the translations by language code (fr, ja). Antora lists
// versions by its own version ordering, which put 日本語 before Français.
const code = (v) => (v && v.version) || ''
module.exports = (versions) =>
  (versions || []).slice().sort((a, b) => (code(a) === code(b) ? 0 : code(a) === '' ? -1
    : code(b) === '' ? 1 : code(a) < code(b) ? -1 : 1))
