'use strict'
// {{or a b ...}}: the first truthy argument (the last argument is Handlebars' options hash).
module.exports = (...args) => args.slice(0, -1).find(Boolean)
