'use strict'
// Asciidoctor extension (antora-playbook.yml): in the Japanese edition, a line break in the
// source between Japanese characters, or after Japanese punctuation, is not a space. HTML
// turns every source line break inside a paragraph into a space, which puts stray gaps after
// 。 and 、 and inside words; browsers do not drop them (CSS Text 4's segment-break rules
// are not implemented). Listings (<pre>) are left as they are. The PDF does the same in
// scripts/pdf/tr4947_pdf.rb.
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}ー、。，．・：；？！「」『』（）［］〈〉《》【】〜'
const JOIN = new RegExp(`(?<=[${CJK}])\\n(?=[${CJK}])|(?<=[、。，．：；？！」』）】])\\n`, 'gu')

function joinJapanese (html) {
  // Keep <pre> and <script> blocks (and everything inside them) untouched, and mermaid
  // sources: each of their lines is a statement (joining two after a ） lost a message).
  return html
    .split(/(<pre[\s>][\s\S]*?<\/pre>|<script[\s>][\s\S]*?<\/script>|<div class="mermaid[\s"][\s\S]*?<\/div>)/)
    .map((part, i) => (i % 2 ? part : part.replace(JOIN, '')))
    .join('')
}

module.exports.joinJapanese = joinJapanese
module.exports.register = function (registry) {
  registry.postprocessor(function () {
    this.process((doc, output) => (doc.getAttribute('page-lang') === 'ja' ? joinJapanese(output) : output))
  })
}
