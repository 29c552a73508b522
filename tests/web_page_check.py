"""Drives fanyi's web page in a real headless Chromium (Debian's chromium and
chromium-driver, through Selenium) as a person would, against a running
server, and checks what it shows against the same server's HTTP API.

Usage: web_page_check.py BASE_URL SCREENSHOT_PNG WORK_DIR
Exits non-zero, saying which check failed, when one does.
"""
import json
import os
import sys
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

base, screenshot, work_dir = sys.argv[1], sys.argv[2], sys.argv[3]


def api(text, source, target):
    """What the server's /translate answers: what the page must show."""
    request = urllib.request.Request(
        base + "translate",
        data=json.dumps({"q": text, "source": source, "target": target}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)["translatedText"]


options = Options()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--window-size=1100,720"):
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                          options=options)
wait = WebDriverWait(driver, 30)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        raise AssertionError(what)
    checks += 1


def element(id_):
    return driver.find_element(By.ID, id_)


def output_becomes(expected, what):
    try:
        wait.until(lambda _: element("output").get_attribute("value") == expected)
    except Exception:
        raise AssertionError(
            f"{what}: the page shows {element('output').get_attribute('value')!r}, "
            f"the API answers {expected!r} (status: {element('status').text!r})")
    check(True, what)


try:
    driver.get(base)
    wait.until(lambda _: len(Select(element("source")).options) > 1)
    check(element("input").get_attribute("id") == driver.switch_to.active_element.get_attribute("id"),
          "the text box has the focus")
    # Every control has a label a screen reader reads.
    for control in ("source", "target", "input", "output", "file"):
        labels = driver.find_elements(By.CSS_SELECTOR, f"label[for={control}]")
        check(len(labels) == 1 and labels[0].get_attribute("textContent").strip(),
              f"{control} has a label")
    check(element("swap").get_attribute("aria-label") == "Swap languages",
          "the swap button has an accessible name")

    # Typing translates, as the API does.
    Select(element("source")).select_by_value("en")
    Select(element("target")).select_by_value("zh")
    sentence = "I love you."
    element("input").send_keys(sentence)
    simplified = api(sentence, "en", "zh-Hans")
    output_becomes(simplified, "typing translates")
    check(element("counter").text.startswith(f"{len(sentence)} / "),
          f"the counter counts the characters: {element('counter').text!r}")
    check("zh-Hans" in element("curl").get_attribute("textContent"),
          "the curl snippet has the request")

    # The script choice switches to Traditional characters.
    traditional = api(sentence, "en", "zh-Hant")
    check(traditional != simplified,
          "the sentence's translation differs by script (pick another)")
    driver.find_element(By.CSS_SELECTOR, "input[name=script][value=zh-Hant]").click()
    output_becomes(traditional, "the script choice switches to Traditional")
    check("target=zh-Hant" in driver.current_url,
          "the address links to the translation")

    # Swap: the translation becomes the text, in the other direction.
    element("swap").click()
    wait.until(lambda _: element("source").get_attribute("value") == "zh")
    check(element("target").get_attribute("value") == "en", "swap sets the target")
    check(element("input").get_attribute("value") == traditional,
          "swap moves the translation into the text box")
    output_becomes(api(traditional, "zh", "en"), "swap translates back")

    # A link translates when opened.
    driver.get(base + "?" + urllib.parse.urlencode(
        {"source": "en", "target": "zh-Hant", "q": sentence}))
    output_becomes(traditional, "a link translates when opened")

    # Auto Detect shows the language it found.
    Select(element("source")).select_by_value("auto")
    wait.until(lambda _: "English" in element("detected").text)
    check("%" in element("detected").text, "the detected language has its confidence")
    driver.save_screenshot(screenshot)

    # The file tab translates a subtitle file and offers it to download.
    element("file-tab").click()
    check(not element("file-panel").get_attribute("hidden"), "the file tab shows")
    subtitles = os.path.join(work_dir, "talk.srt")
    with open(subtitles, "w", encoding="utf-8") as out:
        out.write("1\n00:00:01,000 --> 00:00:02,000\nI love you.\n")
    Select(element("source")).select_by_value("en")
    element("file").send_keys(subtitles)
    driver.find_element(By.CSS_SELECTOR, "#file-form button[type=submit]").click()
    wait.until(lambda _: element("download").is_displayed())
    link = element("download").get_attribute("href")
    with urllib.request.urlopen(link, timeout=60) as download:
        translated = download.read().decode("utf-8")
    check(translated == "1\n00:00:01,000 --> 00:00:02,000\n" + traditional + "\n",
          f"the downloaded subtitles keep their timing: {translated!r}")

    # On a phone's width the panes stack.
    driver.set_window_size(390, 800)
    element("text-tab").click()
    first = element("input").location
    second = element("output").location
    check(second["y"] > first["y"], "the panes stack on a narrow screen")
finally:
    driver.quit()
print(f"web page: {checks} checks passed")
