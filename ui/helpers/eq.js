'use strict'
// {{#if (eq a b)}}: strict equality (Antora supplies only relativize/resolvePage/resolvePageURL).
module.exports = (a, b) => a === b
