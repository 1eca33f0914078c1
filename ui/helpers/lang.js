'use strict'
// {{lang page}}: the page's language (its edition's page-lang), for <html lang> and hreflang.
module.exports = (page) => (page && page.attributes && page.attributes.lang) || 'en'
