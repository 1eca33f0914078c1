# Asciidoctor PDF extension for the guide's PDFs (antora-assembler.yml):
#
# - a title page that says what the book is: the guide's title, the edition, the date it was
#   built and where its figures come from (the edition's pdf-edition, pdf-date-label and
#   pdf-disclaimer attributes, in its language);
# - lab and TR figures told apart as on the site: a lab result's title starts with a lab
#   badge, a table of figures published in the TR (role tr-figure) with a TR badge and
#   shaded rows (the theme, scripts/pdf/themes/tr4947-theme.yml, styles both badges);
# - Japanese prose joined where the source breaks a line between Japanese characters or
#   after Japanese punctuation, so no stray space follows 。 or 、 (the site does the same in
#   ui/helpers, scripts/asciidoc/ja-line-breaks.js).

module TR4947PDF
  MONTHS = {
    'fr' => %w(janvier février mars avril mai juin juillet août septembre octobre novembre décembre),
  }.freeze

  def self.date lang, time = Time.now.utc
    case lang
    when 'fr' then %(#{time.day} #{MONTHS['fr'][time.month - 1]} #{time.year})
    when 'ja' then %(#{time.year}年#{time.month}月#{time.day}日)
    else time.strftime('%B %-d, %Y')
    end
  end

  # A line break in the source between these joins without a space in Japanese.
  CJK = '\p{Han}\p{Hiragana}\p{Katakana}ー、。，．・：；？！「」『』（）［］〈〉《》【】〜'
  JOIN = /(?<=[#{CJK}])\n(?=[#{CJK}])|(?<=[、。，．：；？！」』）】])\n/

  def self.join_ja text
    text.gsub JOIN, ''
  end
end

# Japanese line breaking (kinsoku), for the edition that sets scripts: cjk. asciidoctor-pdf
# then puts a break opportunity (a zero-width space) before every CJK character, so a line
# could start with ）：。 or end with （「. This one is put before a CJK character only where
# Japanese allows a break: never before closing brackets, punctuation, the prolonged sound
# mark and small kana, never after an opening bracket. Latin words get none (prawn breaks
# them only at spaces and hyphens).
module TR4947PDF
  NO_START = '、。，．・：；？！）」』】〕］〉》ー々〜ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ'
  NO_END = '（「『【〔［〈《'
  # ...and after Japanese punctuation or a kana or kanji that a Latin word or inline code
  # follows (、rec.speedup; と min.insync.replicas=2、: the code moves with its 、).
  # None next to a zero-width space already there ({wbr}): prawn measures two in a row as
  # a glyph each (IPAex Gothic's is 1 em wide).
  KINSOKU_BREAK = /(?<!\u200b)(?:(?<![#{NO_END}])(?=[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef])(?![#{NO_START}])|(?<=[、。，．：；？！）」』】〕])(?=[A-Za-z0-9`(\[\/_.<-])|(?<=[\u3040-\u30ff\u3400-\u9fff])(?=[A-Za-z0-9`<]))/

  # The widest unbreakable word of a cell, in Latin characters (a header's in bold: a fifth
  # more; a Japanese character: two). Words break at spaces, after hyphens, at zero-width
  # spaces ({wbr}) and where Japanese allows.
  def self.word_need text, bold = false
    words = text.to_s.gsub(/<[^>]+>|&[#\w]+;/, ' ').split(/\s|\u200b|(?<=-)|#{KINSOKU_BREAK}/).reject(&:empty?)
    (words.map {|w| w.each_char.sum {|c| c.ord >= 0x3000 ? 2 : 1 } }.max || 1) * (bold ? 1.2 : 1) + 2
  end
end
Asciidoctor::PDF::Converter.send :remove_const, :CjkLineBreakRx
Asciidoctor::PDF::Converter.const_set :CjkLineBreakRx, TR4947PDF::KINSOKU_BREAK

# Kinsoku where styled pieces of text (prawn's fragments) meet. The regex above sees the
# markup, so it also breaks between ト and </a> or （ and <a> (チェックリスト | ）。). A fragment
# that starts with a NO_START character loses the break before it and is joined to the word
# before it (asciidoctor-pdf's :wj, which keeps a footnote mark with its word: the word moves
# to the next line with it); one after a NO_END character loses its leading break and is
# joined the same way (（ moves with pause_s; code that starts with a hyphen, a break for
# prawn, can still leave it at the end of a line: （ / --target my-aff）). And
# prawn 2.4 re-queues a line that did not fit on the page (Arranger#repack_unretrieved)
# without its zero-width spaces, so the next page's first line had no breaks left
# (（target_kind: lab | ）と宣言…): it gets the original text. Only where scripts: cjk.
module TR4947PDF
  module KinsokuArranger
    def format_array= array
      if @document.instance_variable_get :@cjk_line_breaks
        zwsp, no_start, no_end = Prawn::Text::ZWSP, /\A\u200b*[#{NO_START}]/, /[#{NO_END}]\z/
        (array = array.map(&:dup)).each_cons 2 do |a, b|
          next unless (at = a[:text]) && (bt = b[:text])
          if no_start.match? bt
            b[:text] = bt = bt.sub(/\A\u200b+/, '')
            a[:text] = at = at.sub(/\u200b+\z/, '')
            b[:wj] = true unless at.empty? || at.end_with?(' ', "\n", "\u0000")
          end
          if no_end.match? at.delete(zwsp)
            b[:text] = bt.sub(/\A\u200b+/, '')
            b[:wj] = true
          end
        end
      end
      super
    end

    def repack_unretrieved
      return super unless @document.instance_variable_get :@cjk_line_breaks
      repacked = []
      while (fragment = retrieve_fragment)
        repacked << fragment.format_state.merge(text: fragment.instance_variable_get(:@original_text))
      end
      @unconsumed = repacked.concat @unconsumed
    end
  end
end
Prawn::Text::Formatted::Arranger.prepend TR4947PDF::KinsokuArranger

class TR4947Marks < Asciidoctor::Extensions::Treeprocessor
  def process doc
    lang = doc.attr 'page-lang', 'en'
    tr_mark = doc.attr 'pdf-mark-tr', 'TR-4947'
    lab_mark = doc.attr 'pdf-mark-lab', 'LAB'
    doc.find_by(context: :table) {|t| t.has_role? 'tr-figure' }.each do |t|
      t.title = %([.pdf-tr-mark]##{tr_mark}# #{t.title}) if t.title?
      t.set_attr 'stripes', 'all'
    end
    doc.find_by(context: :example) {|b| b.has_role? 'result' }.each do |b|
      b.title = %([.pdf-lab-mark]##{lab_mark}# #{b.title}) if b.title? && (b.has_role? 'lab')
    end
    # Every table's columns get at least their widest word (header or body), taken from the
    # columns with room to spare; a table whose words cannot all fit across the page at the
    # table font is set smaller (pdf-font-scale, which result tables may already carry from
    # tr4947.results.render). So the PDF never cuts a word ("Editio/n", "consommateu/rs").
    # About 88 Latin characters fit across an A4 page at 9 pt.
    doc.find_by(context: :table) {|t| !(t.option? 'autowidth') }.each do |t|
      heads, rows = t.rows.head.size, t.rows.head + t.rows.body
      next if rows.empty? || rows.any? {|r| r.size != t.columns.size }
      need = t.columns.each_index.map do |i|
        rows.each_with_index.map {|r, k| TR4947PDF.word_need(r[i].text, k < heads) }.max
      end
      scale = (t.attr 'pdf-font-scale').to_f
      scale = 1.0 unless scale > 0 && scale < 1
      if need.sum * scale > 88
        # the words alone fill the line: a smaller face, each column its widest word
        scale = [88.0 / need.sum, 0.5].max
        t.set_attr 'pdf-font-scale', scale.round(2)
        t.columns.each_with_index {|c, i| c.set_attr 'colpcwidth', (need[i] * 100.0 / need.sum).round(4) }
        next
      end
      need = need.map {|n| n * scale * 100.0 / 88 }
      pcs = t.columns.map {|c| (c.attr 'colpcwidth').to_f }
      short = need.zip(pcs).sum {|n, p| [n - p, 0].max }
      excess = need.zip(pcs).map {|n, p| [p - n, 0].max }
      next if short <= 0 || excess.sum <= short
      t.columns.each_with_index do |c, i|
        c.set_attr 'colpcwidth', (pcs[i] < need[i] ? need[i] : pcs[i] - short * excess[i] / excess.sum).round(4)
      end
    end
    if lang == 'ja'
      doc.find_by {|b| b.context == :paragraph || b.context == :admonition }.each do |b|
        b.lines.replace TR4947PDF.join_ja(b.lines.join "\n").split("\n") if b.lines.size > 1
      end
      doc.find_by(context: :list_item).each do |li|
        text = li.instance_variable_get :@text
        li.text = TR4947PDF.join_ja text if text&.include? "\n"
      end
      doc.find_by(context: :table_cell).each do |c|
        text = c.instance_variable_get :@text
        c.text = TR4947PDF.join_ja text if text.is_a?(String) && (text.include? "\n")
      end
    end
    doc
  end
end

# The title page: the theme lays out title and subtitle; the revision line becomes the
# edition and the build date, and the disclaimer goes below it.
class TR4947Converter < (Asciidoctor::Converter.for 'pdf')
  register_for 'pdf'

  # Table text is set flush left (justified cells open wide gaps in narrow columns). A result
  # table whose columns' longest words do not fit across the page at the table font says by
  # how much to shrink it (pdf-font-scale, tr4947.results.render), so no word is cut.
  def convert_table node
    saved = [@theme.table_font_size, @base_text_align]
    scale = (node.attr 'pdf-font-scale').to_f
    @theme.table_font_size = (saved[0] || @theme.base_font_size) * scale if scale > 0 && scale < 1
    @base_text_align = 'left'
    # asciidoctor-pdf 2.3 puts the Japanese break opportunities in body cells only, so a
    # header such as 使用率（%） was one word that prawn cut by character wherever the column
    # ended (使用率（% / ）). Header cells get them too (TR4947Marks sizes columns for that),
    # once (a table that is measured first is converted twice).
    if @cjk_line_breaks
      node.rows.head.flatten.each do |cell|
        next if cell.style == :asciidoc || (cell.singleton_methods.include? :text)
        text = cell.text.gsub CjkLineBreakRx, ZeroWidthSpace
        cell.define_singleton_method(:text) { text }
      end
    end
    super
  ensure
    @theme.table_font_size, @base_text_align = saved
  end

  def ink_title_page doc
    lang = doc.attr 'page-lang', 'en'
    edition = doc.attr 'pdf-edition'
    built = [(doc.attr 'pdf-date-label'), (TR4947PDF.date lang)].compact.join(lang == 'ja' ? '：' : ' ')
    doc.remove_attr 'revnumber'
    doc.remove_attr 'revremark'
    doc.set_attr 'revdate', [edition, built].compact.join(' · ')
    super
    return unless (disclaimer = doc.attr 'pdf-disclaimer')
    move_down @theme.title_page_revision_margin_top || 12
    align = (@theme.title_page_text_align || 'left').to_sym
    theme_font :title_page_disclaimer do
      indent 0, bounds.width * 0.25 do
        ink_prose disclaimer, align: align, margin: 0, normalize: true
      end
    end
  end
end

Asciidoctor::Extensions.register do
  treeprocessor TR4947Marks
end
