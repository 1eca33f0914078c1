/* Site behaviour, no build step and no network: runs from file:// as well as from a server.
 * - highlight.js on source blocks whose language it knows (others stay plain, no warning)
 * - a copy button on every listing
 * - the page table of contents from the article's h2/h3 headings
 * - the phone-width navigation toggle
 * - math: KaTeX renders \( \) and \[ \] (from AsciiDoc stem blocks) as MathML (no fonts needed)
 */
;(function () {
  'use strict'

  // --- syntax highlighting ------------------------------------------------------------
  if (window.hljs) {
    document.querySelectorAll('pre.highlight code[data-lang]').forEach(function (code) {
      var lang = code.getAttribute('data-lang')
      if (lang && window.hljs.getLanguage(lang)) window.hljs.highlightElement(code)
    })
  }

  // --- the words this script adds, in the page's edition (<html lang>) ------------------
  var WORDS = {
    en: { copy: 'Copy', copyLabel: 'Copy to clipboard', copied: 'Copied', select: 'Select and copy' },
    fr: { copy: 'Copier', copyLabel: 'Copier dans le presse-papiers', copied: 'Copié', select: 'Sélectionnez et copiez' },
    ja: { copy: 'コピー', copyLabel: 'クリップボードにコピー', copied: 'コピーしました', select: '選択してコピーしてください' },
  }
  var words = WORDS[document.documentElement.lang] || WORDS.en

  // --- copy buttons -------------------------------------------------------------------
  function copyText (text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text)
    // file:// pages are not a secure context: fall back to a hidden textarea.
    return new Promise(function (resolve, reject) {
      var ta = document.createElement('textarea')
      ta.value = text
      ta.setAttribute('readonly', '')
      ta.style.position = 'fixed'
      ta.style.opacity = '0'
      document.body.appendChild(ta)
      ta.select()
      try { document.execCommand('copy') ? resolve() : reject(new Error('copy refused')) } catch (e) { reject(e) }
      document.body.removeChild(ta)
    })
  }
  document.querySelectorAll('.listingblock > .content, .literalblock > .content').forEach(function (box) {
    var pre = box.querySelector('pre')
    if (!pre) return
    var btn = document.createElement('button')
    btn.type = 'button'
    btn.className = 'copy-button'
    btn.textContent = words.copy
    btn.setAttribute('aria-label', words.copyLabel)
    btn.addEventListener('click', function () {
      copyText(pre.innerText).then(function () { btn.textContent = words.copied }, function () { btn.textContent = words.select })
      setTimeout(function () { btn.textContent = words.copy }, 1500)
    })
    box.appendChild(btn)
  })

  // --- page table of contents ---------------------------------------------------------
  var toc = document.querySelector('aside.toc')
  var headings = document.querySelectorAll('article.doc h2[id], article.doc h3[id]')
  if (toc && headings.length > 1) {
    var title = document.createElement('p')
    title.className = 'toc-title'
    title.textContent = toc.getAttribute('data-toc-title') || 'On this page'
    var list = document.createElement('ul')
    headings.forEach(function (h) {
      var li = document.createElement('li')
      li.className = 'toc-' + h.tagName.toLowerCase()
      var a = document.createElement('a')
      a.href = '#' + h.id
      a.textContent = h.textContent
      li.appendChild(a)
      list.appendChild(li)
    })
    toc.appendChild(title)
    toc.appendChild(list)
  } else if (toc) {
    toc.remove()
  }

  // --- navigation toggle (phones) -------------------------------------------------------
  var toggle = document.querySelector('.nav-toggle')
  var nav = document.getElementById('nav')
  if (toggle && nav) {
    toggle.addEventListener('click', function () {
      var open = document.body.classList.toggle('nav-open')
      toggle.setAttribute('aria-expanded', open ? 'true' : 'false')
    })
    var current = nav.querySelector('.is-current')
    if (current && current.scrollIntoView && window.innerWidth > 900) current.scrollIntoView({ block: 'center' })
  }

  // --- math -----------------------------------------------------------------------------
  if (window.renderMathInElement) {
    document.querySelectorAll('.stemblock, .paragraph, td, li').forEach(function (el) {
      window.renderMathInElement(el, {
        delimiters: [{ left: '\\[', right: '\\]', display: true }, { left: '\\(', right: '\\)', display: false }],
        output: 'mathml',
        throwOnError: false,
      })
    })
  }
})()
