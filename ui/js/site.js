/* Site behaviour, no build step and no network: runs from file:// as well as from a server.
 * - highlight.js on source blocks whose language it knows (others stay plain, no warning)
 * - a toolbar above every listing: Copy (the command only: prompts are CSS, lab-only lines
 *   sit in their own block) and, on run transcripts, Wrap lines (remembered)
 * - transcripts: clustershell prompts in an output told apart from what they print
 * - tables wider than their column scroll sideways inside a frame that says so
 * - the page table of contents from the article's h2/h3 headings
 * - the language switch keeps the reader's section
 * - search loaded on first use of the search box
 * - the phone-width navigation toggle
 * - math: KaTeX renders \( \) and \[ \] (from AsciiDoc stem blocks) as MathML (no fonts needed)
 * - <html data-settled> once the page has loaded, its diagrams are drawn and laid out
 */
;(function () {
  'use strict'

  // --- syntax highlighting ------------------------------------------------------------
  if (window.hljs) {
    // A transcript's command carries no prompt in its text (the prompt is CSS): it is shell,
    // not a console session, where a line starting with # would read as a root prompt and
    // the comment after it as a command.
    document.querySelectorAll('.transcript-cmd pre.highlight code[data-lang=console]').forEach(function (code) {
      code.setAttribute('data-lang', 'bash')
      code.classList.remove('language-console')
      code.classList.add('language-bash')
    })
    document.querySelectorAll('pre.highlight code[data-lang]').forEach(function (code) {
      var lang = code.getAttribute('data-lang')
      if (lang && window.hljs.getLanguage(lang)) window.hljs.highlightElement(code)
    })
  }

  // --- the words this script adds, in the page's edition (<html lang>) ------------------
  var WORDS = {
    en: {
      open: 'Open the diagram full size', close: 'Close',
      copy: 'Copy', copyLabel: 'Copy to clipboard', copied: 'Copied', select: 'Select and copy',
      wrap: 'Wrap lines', unwrap: 'Do not wrap', scroll: 'Scroll sideways for more columns' },
    fr: {
      open: 'Ouvrir le schéma en taille réelle', close: 'Fermer',
      copy: 'Copier', copyLabel: 'Copier dans le presse-papiers', copied: 'Copié', select: 'Sélectionnez et copiez',
      wrap: 'Renvoyer à la ligne', unwrap: 'Ne pas renvoyer à la ligne', scroll: 'Faites défiler pour voir les autres colonnes' },
    ja: {
      open: '図を実寸で開く', close: '閉じる',
      copy: 'コピー', copyLabel: 'クリップボードにコピー', copied: 'コピーしました', select: '選択してコピーしてください',
      wrap: '折り返す', unwrap: '折り返さない', scroll: '横にスクロールすると残りの列が表示されます' },
  }
  var lang = document.documentElement.lang
  var words = WORDS[lang] || WORDS.en

  function store (key, value) {
    try { if (value === undefined) return window.localStorage.getItem(key); window.localStorage.setItem(key, value) } catch (e) {}
  }

  // --- copy and wrap ------------------------------------------------------------------------
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
  function button (cls, text, label) {
    var b = document.createElement('button')
    b.type = 'button'
    b.className = cls
    b.textContent = text
    if (label) b.setAttribute('aria-label', label)
    return b
  }
  function toolbar (box) {
    var bar = document.createElement('div')
    bar.className = 'code-toolbar'
    box.insertBefore(bar, box.firstChild)
    return bar
  }
  // What a reader copies is the block's text: CSS prompts are not text, and what a run set
  // on the lab only (exports, lab defaults) is a block of its own without a Copy button.
  document.querySelectorAll('.listingblock > .content, .literalblock > .content').forEach(function (box) {
    var pre = box.querySelector('pre')
    if (!pre || box.closest('.transcript-env, .transcript-out')) return
    var btn = button('copy-button', words.copy, words.copyLabel)
    btn.addEventListener('click', function () {
      copyText(pre.innerText.replace(/\n$/, '')).then(function () { btn.textContent = words.copied }, function () { btn.textContent = words.select })
      setTimeout(function () { btn.textContent = words.copy }, 1500)
    })
    toolbar(box).appendChild(btn)
  })
  var transcripts = document.querySelectorAll('.exampleblock.transcript')
  function setWrap (on) {
    transcripts.forEach(function (t) {
      t.classList.toggle('wrap', on)
      var b = t.querySelector('.wrap-button')
      if (b) { b.textContent = on ? words.unwrap : words.wrap; b.setAttribute('aria-pressed', on ? 'true' : 'false') }
    })
  }
  transcripts.forEach(function (t) {
    var content = t.querySelector(':scope > .content')
    if (!content) return
    var b = button('wrap-button', words.wrap)
    b.addEventListener('click', function () {
      var on = !t.classList.contains('wrap')
      store('tr4947-wrap', on ? '1' : '0')
      setWrap(on)
    })
    toolbar(content).appendChild(b)
    // The host a command ran on sits in the command's toolbar, left of its Copy button.
    t.querySelectorAll('.listingblock.transcript-cmd').forEach(function (cmd) {
      var host = cmd.querySelector(':scope > .title')
      var bar = cmd.querySelector('.code-toolbar')
      if (host && bar) { host.classList.add('host-chip'); bar.insertBefore(host, bar.firstChild) }
    })
    // Clustershell sessions print the prompt and command inside the output.
    t.querySelectorAll('.transcript-out pre').forEach(function (pre) {
      pre.innerHTML = pre.innerHTML.replace(/^(\S+::\*?&gt; )(.*)$/gm,
        '<span class="out-prompt">$1</span><span class="out-command">$2</span>')
    })
  })
  setWrap(store('tr4947-wrap') === '1')

  // --- tables that scroll sideways say so ----------------------------------------------
  // Code in a table cell may break after . / _ = , : - (a <wbr>, never copied with the text),
  // so a column of settings wraps instead of widening its table.
  // In prose cells, only long tokens (a setting with its value, a path) get them.
  var BREAK_AFTER = /(?<=[./_=,:-])(?=[^\s./_=,:-])/
  function breakableCode (code, minLength) {
    var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT)
    var nodes = []
    while (walker.nextNode()) nodes.push(walker.currentNode)
    nodes.forEach(function (node) {
      var parts = minLength
        ? node.nodeValue.split(/(\s+)/).map(function (w) {
          return w.length >= minLength ? w.split(BREAK_AFTER).join('\u0000') : w
        }).join('').split('\u0000')
        : node.nodeValue.split(BREAK_AFTER)
      if (parts.length < 2) return
      var frag = document.createDocumentFragment()
      parts.forEach(function (part, i) {
        if (i) frag.appendChild(document.createElement('wbr'))
        frag.appendChild(document.createTextNode(part))
      })
      node.parentNode.replaceChild(frag, node)
    })
  }
  document.querySelectorAll('article.doc td.tableblock code, article.doc td.tableblock pre').forEach(function (c) { breakableCode(c) })
  // Long inline code in prose (a setting with its value) may break at the same places on a phone.
  document.querySelectorAll('article.doc :is(p, li, dd, dt) > code').forEach(function (c) {
    if (!c.closest('td.tableblock')) breakableCode(c, 24)
  })
  document.querySelectorAll('article.doc table.result-table td.tableblock:not(.halign-right)').forEach(function (c) {
    breakableCode(c, 16)
    // A sentence (a fix, a reason) keeps a readable measure when its table is squeezed.
    if (c.textContent.length > 60 && c.textContent.split(' ').length > 8) c.classList.add('prose-cell')
  })
  // A figure with its spread, "1.6 (1.6-1.7, n=3)", may break before its parenthesis only:
  // never inside a number or between a number and its unit.
  document.querySelectorAll('article.doc table.result-table td.halign-right > p').forEach(function (p) {
    if (p.children.length || !/ \(/.test(p.textContent)) return
    var parts = p.textContent.split(/ (?=\()|(?<=\(.*,) /)
    p.textContent = ''
    parts.forEach(function (part, i) {
      if (i) p.appendChild(document.createTextNode(' '))
      var span = document.createElement('span')
      span.className = 'figure-part'
      span.textContent = part
      p.appendChild(span)
    })
  })

  var frames = []
  document.querySelectorAll('article.doc table.tableblock').forEach(function (table) {
    var frame = document.createElement('div')
    frame.className = 'table-frame' + (table.classList.contains('tr-figure') ? ' tr-figure' : '')
    var scroller = document.createElement('div')
    scroller.className = 'table-scroll'
    scroller.tabIndex = 0
    var cue = document.createElement('div')
    cue.className = 'scroll-cue'
    cue.textContent = words.scroll
    var caption = table.querySelector(':scope > caption')
    table.parentNode.insertBefore(frame, table)
    if (caption) {              // the caption stays in view when the table scrolls
      var title = document.createElement('div')
      title.className = 'title table-title'
      title.innerHTML = caption.innerHTML
      frame.appendChild(title)
      caption.classList.add('sr-only')
    }
    frame.appendChild(cue)
    frame.appendChild(scroller)
    scroller.appendChild(table)
    // A result table of many columns (a drill at several lengths and configurations) is set
    // denser, so that it is read whole on a wide screen instead of scrolled.
    var head = table.querySelector('thead tr')
    if (table.classList.contains('result-table') && head && head.children.length >= 11) table.classList.add('dense')
    // A result table sizes to its content: long headings wrap instead of widening it.
    if (table.classList.contains('result-table')) {
      table.querySelectorAll('th').forEach(function (th) {
        if (th.textContent.length < 24) return
        var span = document.createElement('span')
        span.className = 'th-text'
        while (th.firstChild) span.appendChild(th.firstChild)
        th.appendChild(span)
      })
    }
    // An authored table of prose (a setting, where, why, what instead) reads as one card per
    // row on a phone (site.css): each cell with its column's name.
    var head = table.tHead && table.tHead.rows[0]
    if (head && head.cells.length >= 3 && !table.classList.contains('result-table') && !table.closest('.exampleblock.result')) {
      var names = Array.prototype.map.call(head.cells, function (th) { return th.textContent.trim() })
      Array.prototype.forEach.call(table.tBodies, function (body) {
        Array.prototype.forEach.call(body.rows, function (row) {
          Array.prototype.forEach.call(row.cells, function (cell, i) { if (names[i]) cell.setAttribute('data-label', names[i]) })
        })
      })
      table.classList.add('cards')
    }
    function update () {
      var more = scroller.scrollWidth > scroller.clientWidth + 1
      frame.classList.toggle('is-scrollable', more)
      frame.classList.toggle('at-end', !more || scroller.scrollLeft + scroller.clientWidth >= scroller.scrollWidth - 2)
      frame.classList.toggle('at-start', scroller.scrollLeft <= 1)
    }
    scroller.addEventListener('scroll', update, { passive: true })
    // Again whenever its box changes: a window resize, a fold opened, the wide layout below.
    if (window.ResizeObserver) new ResizeObserver(update).observe(scroller)
    window.addEventListener('resize', update)
    update()
    frames.push({ frame: frame, scroller: scroller, table: table, update: update })
  })

  // --- wide screens: wide tables and diagrams use the room beside the text column ----------
  // Where the window leaves room right of the article (the page's table of contents column
  // and margin), a table wider than the text column, or a diagram drawn smaller than its
  // natural size, grows into it: the block that holds it (its result box, or itself) is
  // widened to what its content needs, at most to the room there is. The table of contents
  // steps aside while such a block passes beside it.
  var doc = document.querySelector('article.doc')
  var main = document.querySelector('main.main')
  var tocBox = document.querySelector('aside.toc')
  var wideBlocks = []
  function unitOf (el) {
    var unit = el.closest('.openblock.side-by-side')
    if (unit) return unit
    unit = el.closest('.exampleblock.result')              // the outermost result box
    while (unit && unit.parentElement && unit.parentElement.closest('.exampleblock.result')) {
      unit = unit.parentElement.closest('.exampleblock.result')
    }
    return unit || el.closest('.table-frame, .imageblock') || el
  }
  function naturalTableWidth (f) {
    var t = f.table
    var old = t.style.width
    t.style.width = 'max-content'
    var w = t.getBoundingClientRect().width
    t.style.width = old
    return w
  }
  // An authored table whose column ratios (cols="2,3,3,4") make it wider than its column
  // lets the browser share the width out by content instead.
  function freeColumns () {
    frames.forEach(function (f) {
      if (f.table.classList.contains('result-table') || f.table.classList.contains('cols-free')) return
      if (f.scroller.scrollWidth > f.scroller.clientWidth + 1) f.table.classList.add('cols-free')
    })
  }
  function layoutWide () {
    wideBlocks.forEach(function (b) { b.style.marginRight = ''; b.classList.remove('is-wide') })
    wideBlocks = []
    if (!doc || !main) return
    var mainBox = main.getBoundingClientRect()
    var edge = mainBox.right - 16                          // keep a margin at the window's edge
    var wanted = new Map()
    function want (el, extra) {
      var unit = unitOf(el)
      if (!doc.contains(unit) || extra < 8) return
      wanted.set(unit, Math.max(wanted.get(unit) || 0, extra))
    }
    frames.forEach(function (f) {
      if (f.table.classList.contains('fit') || !f.frame.offsetParent) return
      if (f.frame.closest('.side-by-side:not(.stacked)')) return
      var need = f.table.classList.contains('result-table') ? naturalTableWidth(f) : f.scroller.scrollWidth
      want(f.frame, need - f.scroller.clientWidth)
    })
    document.querySelectorAll('article.doc .mermaid svg').forEach(function (svg) {
      var natural = svg.viewBox && svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0
      var box = svg.parentNode.getBoundingClientRect()
      want(svg.parentNode, natural + 28 - box.width)          // 28: the diagram frame's padding
    })
    wanted.forEach(function (extra, unit) {
      var right = unit.getBoundingClientRect().right
      var room = Math.floor(edge - right)
      if (room < 24) return
      unit.style.marginRight = -Math.min(Math.ceil(extra), room) + 'px'
      unit.classList.add('is-wide')
      wideBlocks.push(unit)
    })
    frames.forEach(function (f) { f.update() })
    stepAside()
  }
  function stepAside () {
    if (!tocBox) return
    var t = tocBox.getBoundingClientRect()
    var covered = t.width > 0 && wideBlocks.some(function (b) {
      var r = b.getBoundingClientRect()
      return r.right > t.left && r.bottom > t.top && r.top < t.top + tocBox.scrollHeight
    })
    tocBox.classList.toggle('is-covered', covered)
  }
  var side = document.querySelectorAll('.openblock.side-by-side')
  function stackSideBySide () {
    side.forEach(function (block) {
      block.classList.remove('stacked')
      var over = Array.prototype.some.call(block.querySelectorAll('.table-scroll'), function (s) { return s.scrollWidth > s.clientWidth + 1 })
      block.classList.toggle('stacked', over)
    })
  }
  var pending = null
  function relayout () {
    if (pending) return
    pending = window.requestAnimationFrame(function () { pending = null; freeColumns(); stackSideBySide(); layoutWide() })
  }
  relayout()
  window.addEventListener('resize', relayout)
  window.addEventListener('load', relayout)
  document.addEventListener('tr4947:diagrams', relayout)
  window.addEventListener('scroll', stepAside, { passive: true })

  // --- diagrams: a click (or Enter) opens one full size ---------------------------------
  var dialog = null
  function openDiagram (svg) {
    if (!dialog) {
      dialog = document.createElement('dialog')
      dialog.className = 'diagram-dialog'
      var close = button('diagram-close', words.close)
      close.addEventListener('click', function () { dialog.close() })
      dialog.appendChild(close)
      var body = document.createElement('div')
      body.className = 'diagram-full'
      dialog.appendChild(body)
      // A click on the backdrop (outside the dialog's box) closes it.
      dialog.addEventListener('click', function (e) {
        var r = dialog.getBoundingClientRect()
        if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) dialog.close()
      })
      document.body.appendChild(dialog)
    }
    var full = dialog.querySelector('.diagram-full')
    full.innerHTML = ''
    var copy = svg.cloneNode(true)
    var vb = svg.viewBox && svg.viewBox.baseVal
    copy.removeAttribute('style')
    copy.setAttribute('width', vb ? vb.width : svg.getBoundingClientRect().width)
    copy.setAttribute('height', vb ? vb.height : svg.getBoundingClientRect().height)
    full.appendChild(copy)
    dialog.showModal()
  }
  document.addEventListener('tr4947:diagrams', function () {
    document.querySelectorAll('article.doc .mermaid').forEach(function (box) {
      var svg = box.querySelector('svg')
      if (!svg || box.classList.contains('opens')) return
      box.classList.add('opens')
      box.setAttribute('role', 'button')
      box.tabIndex = 0
      box.title = words.open
      box.setAttribute('aria-label', words.open)
      box.addEventListener('click', function () { openDiagram(svg) })
      box.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); openDiagram(svg) }
      })
    })
  })

  // --- page table of contents ---------------------------------------------------------
  var toc = document.querySelector('aside.toc')
  var headings = document.querySelectorAll('article.doc h2[id], article.doc h3[id]')
  if (toc && headings.length > 1) {
    var tocTitle = document.createElement('p')
    tocTitle.className = 'toc-title'
    tocTitle.textContent = toc.getAttribute('data-toc-title') || 'On this page'
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
    toc.appendChild(tocTitle)
    toc.appendChild(list)
  } else if (toc) {
    toc.remove()
  }

  // --- the language switch keeps the section ---------------------------------------------
  // The editions have the same sections in the same order (tests/docs/test_editions.py), but
  // a section without an explicit [#anchor] has an id made from its translated title. So the
  // switch links the section by its place: #section-<n> when its id is generated, its own id
  // otherwise; the page it lands on turns #section-<n> back into that section's id.
  var sections = Array.prototype.slice.call(document.querySelectorAll('article.doc :is(h2, h3, h4, h5, h6)[id]'))
  function currentSection () {
    var hash = decodeURIComponent(window.location.hash.slice(1))
    var byHash = hash && document.getElementById(hash)
    if (byHash && sections.indexOf(byHash) >= 0) return byHash
    // A section counts as the reader's once its heading reaches the top (below the header).
    var line = (document.querySelector('.header') || { offsetHeight: 0 }).offsetHeight + 32
    var current = null
    sections.forEach(function (h) { if (h.getBoundingClientRect().top <= line) current = h })
    return current
  }
  document.querySelectorAll('.language-switch a[hreflang]').forEach(function (a) {
    a.addEventListener('click', function () {
      var h = currentSection()
      if (!h) return
      var id = /^_/.test(h.id) ? 'section-' + (sections.indexOf(h) + 1) : h.id
      a.href = a.href.split('#')[0] + '#' + id
    })
  })
  var place = /^#section-(\d+)$/.exec(window.location.hash)
  if (place && sections[+place[1] - 1]) {
    var target = sections[+place[1] - 1]
    history.replaceState(null, '', '#' + target.id)
    // Again once images and diagrams have taken their room above it.
    var land = function () { target.scrollIntoView() }
    land()
    window.addEventListener('load', function () { land(); setTimeout(land, 600) })
  }

  // --- search, loaded on first use ----------------------------------------------------------
  var searchInput = document.getElementById('search-input')
  if (searchInput) {
    var started = false
    var startSearch = function () {
      // The settings element comes after this script (ui/partials/search-scripts.hbs).
      var searchConfig = document.getElementById('search-ui-script')
      if (started || !searchConfig) return
      started = true
      var scripts = (searchConfig.getAttribute('data-scripts') || '').split(/\s+/).filter(Boolean)
      var next = function () {
        var src = scripts.shift()
        if (!src) return
        var s = document.createElement('script')
        s.src = src
        s.onload = function () {
          // The search UI disables the box until its index has loaded: keep it usable, so
          // nothing the reader types is lost; the search runs once the index is there.
          if (/search-ui\.js$/.test(src)) {
            var focused = document.activeElement === searchInput || document.activeElement === document.body
            searchInput.disabled = false
            if (focused) searchInput.focus()
          }
          next()
        }
        s.onerror = function () { searchInput.disabled = false }
        document.body.appendChild(s)
      }
      searchInput.addEventListener('loadedindex', function () {
        searchInput.disabled = false
        // The search UI listens for keys right after this event: search what was typed then.
        setTimeout(function () {
          if (!searchInput.value) return
          searchInput.focus()
          searchInput.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }))
        }, 0)
      })
      next()
    }
    // The hits are the reader's edition only: their group header names the guide, not the
    // edition's name after it ("... Français").
    var edition = document.querySelector('.language-switch a[aria-current]')
    var menuObserver = new MutationObserver(function () {
      if (!edition) return
      var suffix = ' ' + edition.textContent.trim()
      document.querySelectorAll('.search-result-component-header').forEach(function (h) {
        if (h.textContent.slice(-suffix.length) === suffix) h.textContent = h.textContent.slice(0, -suffix.length)
      })
    })
    menuObserver.observe(document.getElementById('search-field') || document.body, { childList: true, subtree: true })
    ;['focus', 'pointerdown', 'keydown', 'input'].forEach(function (type) {
      searchInput.addEventListener(type, startSearch)
    })
  }

  // --- navigation toggle (phones) -------------------------------------------------------
  var toggle = document.querySelector('.nav-toggle')
  var nav = document.getElementById('nav')
  if (toggle && nav) {
    toggle.addEventListener('click', function () {
      var open = document.body.classList.toggle('nav-open')
      toggle.setAttribute('aria-expanded', open ? 'true' : 'false')
    })
    // The current chapter in the middle of the navigation's own scroll box. Only the nav
    // scrolls: scrollIntoView would scroll the window too, and the page would open past its title.
    var current = nav.querySelector('.is-current')
    if (current && window.innerWidth > 900) {
      var navBox = nav.getBoundingClientRect(), itemBox = current.getBoundingClientRect()
      nav.scrollTop += itemBox.top - navBox.top - (nav.clientHeight - itemBox.height) / 2
    }
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

  // --- settled ----------------------------------------------------------------------------
  // Nothing on the page moves any more once it has loaded, its diagrams are drawn (pages
  // with mermaid only) and the layout after both has run: <html data-settled> says so, for
  // tools that look at the page (the site tests wait for it instead of a fixed time).
  var loaded = document.readyState === 'complete'
  var drawn = !document.querySelector('.mermaid')
  function settle () {
    if (!loaded || !drawn) return
    // Two frames: relayout's own requestAnimationFrame has run, and what it moved is painted.
    window.requestAnimationFrame(function () {
      window.requestAnimationFrame(function () { document.documentElement.setAttribute('data-settled', '') })
    })
  }
  window.addEventListener('load', function () { loaded = true; settle() })
  document.addEventListener('tr4947:diagrams', function () { drawn = true; settle() })
  settle()
})()
