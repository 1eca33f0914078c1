'use strict'
// {{ui page "search"}}: a word of the UI in the page's edition (the edition's antora.yml sets
// page-ui-search, page-ui-toc...), English when the page has none (e.g. the 404 page).
// {{ui page "site-title" site.title}}: a word with its own fallback.
const ENGLISH = {
  search: 'Search the guide',
  chapters: 'Chapters',
  toc: 'On this page',
  prev: 'Previous',
  next: 'Next',
  pdf: 'The whole guide as one PDF',
  language: 'Language',
  pagination: 'Previous and next chapter',
  footer: 'An executable rendering of NetApp TR-4947 in the project\'s own words. Results marked ' +
    '<em>lab</em> come from an embedded lab on one machine with stand-ins for ONTAP and AWS, not ' +
    'from NetApp hardware; the TR\'s published figures are shown beside them.',
}
module.exports = (page, key, ...rest) => {
  const attrs = (page && page.attributes) || {}
  const fallback = rest.length > 1 ? rest[0] : undefined
  return attrs[`ui-${key}`] || fallback || ENGLISH[key] || key
}
