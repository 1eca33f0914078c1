'use strict'
// {{ui page "search"}}: a word of the UI in the page's edition (the edition's antora.yml sets
// page-ui-search, page-ui-toc...), English when the page has none (e.g. the 404 page).
const ENGLISH = {
  search: 'Search the guide',
  chapters: 'Chapters',
  toc: 'On this page',
  prev: 'Previous',
  next: 'Next',
  pdf: 'The whole guide as one PDF',
  language: 'Language',
}
module.exports = (page, key) => {
  const attrs = (page && page.attributes) || {}
  return attrs[`ui-${key}`] || ENGLISH[key] || key
}
