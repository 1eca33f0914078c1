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
